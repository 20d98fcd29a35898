/**
 * Tamper evidence for run records. Every record carries, per cluster it covers, a link to the
 * previous record of that cluster (its run id and the SHA-256 of its stored text), and a digest of
 * its own text. {@link verifyChain} then finds, per cluster:
 *
 * - **edited**: a record whose text no longer matches its own digest, or whose text no longer
 *   matches what the next record linked to (an edit that also recomputed the digest);
 * - **missing**: a link to a run whose record is gone;
 * - **reordered**: a link to a run that is not the previous one (records moved or inserted).
 *
 * The oldest record kept is the chain's start (older ones are pruned by retention), so its link
 * is not followed. The newest record is protected by its digest alone.
 */
import { createHash } from 'node:crypto';

/** SHA-256 of a text, hex. */
export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A link to the previous record of a cluster. */
export interface ChainLink {
  run_id: string;
  /** SHA-256 of that record's stored text. */
  sha256: string;
}

/** One stored record of a cluster, as read back. */
export interface ChainEntry {
  run_id: string;
  /** Where it is stored, for messages (`.kplay/runs/X.jsonl`, `ConfigMap kplay-system/kplay-run-x`). */
  where: string;
  /** SHA-256 of its stored text (what the next record links to). */
  sha256: string;
  /** Whether its text matches the digest it carries (false: edited, or no digest at all). */
  digestOk: boolean;
  /** Its link to the previous record of this cluster (`null`: the first record; `undefined`: none written, a record of an older kplay). */
  prev: ChainLink | null | undefined;
}

/** A broken link in a cluster's chain. */
export interface ChainProblem {
  cluster: string;
  run_id: string;
  kind: 'edited' | 'missing' | 'reordered' | 'unlinked';
  message: string;
}

/**
 * Check one cluster's records (any order). Returns the problems found (empty: the chain is
 * intact). Entries written before chaining existed (`prev === undefined`, no digest) are only
 * accepted before the first chained record.
 */
export function verifyChain(cluster: string, entries: ChainEntry[]): ChainProblem[] {
  const sorted = [...entries].sort((a, b) => a.run_id.localeCompare(b.run_id));
  const byId = new Map(sorted.map((e) => [e.run_id, e]));
  const problems: ChainProblem[] = [];
  const firstChained = sorted.findIndex((e) => e.prev !== undefined);
  sorted.forEach((e, i) => {
    if (e.prev === undefined) {
      if (firstChained !== -1 && i > firstChained) problems.push({ cluster, run_id: e.run_id, kind: 'unlinked', message: `${e.where}: record of run ${e.run_id} carries no link to the previous record (written by hand, or its link was removed)` });
      return;
    }
    if (!e.digestOk) problems.push({ cluster, run_id: e.run_id, kind: 'edited', message: `${e.where}: record of run ${e.run_id} was edited (its text does not match its digest)` });
    const before = sorted[i - 1];
    if (e.prev === null) {
      if (before && before.prev !== undefined) problems.push({ cluster, run_id: e.run_id, kind: 'reordered', message: `${e.where}: record of run ${e.run_id} claims to be the first of ${cluster}, but run ${before.run_id} comes before it` });
      return;
    }
    if (i === 0) return; // the oldest record kept: its predecessor was pruned
    const linked = byId.get(e.prev.run_id);
    if (!linked) {
      problems.push({ cluster, run_id: e.run_id, kind: 'missing', message: `record of run ${e.prev.run_id} of ${cluster} is missing (run ${e.run_id} follows it, ${e.where})` });
      return;
    }
    if (linked !== before) {
      problems.push({ cluster, run_id: e.run_id, kind: 'reordered', message: `${e.where}: run ${e.run_id} follows run ${e.prev.run_id}, but run ${before?.run_id ?? '?'} is stored between them (inserted or reordered)` });
    }
    if (linked.sha256 !== e.prev.sha256) {
      problems.push({ cluster, run_id: linked.run_id, kind: 'edited', message: `${linked.where}: record of run ${linked.run_id} was edited (run ${e.run_id} recorded another hash for it)` });
    }
  });
  return problems;
}
