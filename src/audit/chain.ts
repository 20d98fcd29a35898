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

import type { ChainLink } from '../report/records.js';

export type { ChainLink } from '../report/records.js';

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
 * A cluster's records in the order they were written: records of an older kplay (no link) first,
 * by run id; then the chain, from its start (a record that is the first, or whose predecessor was
 * pruned) along the links. Run ids sort by *start* time, not by write order: a run that started
 * earlier but got the cluster's lock later is written — and linked — after one that started
 * later, so the order is the links', never the ids'. Where the links fork (two records name the
 * same predecessor: tampering, or runs that skipped the lock), the branches follow each other by
 * run id; records the links do not reach come last, by run id.
 */
export function chainOrder<T extends { run_id: string; prev: ChainLink | null | undefined }>(entries: readonly T[]): T[] {
  const byRunId = (a: T, b: T): number => (a.run_id < b.run_id ? -1 : a.run_id > b.run_id ? 1 : 0);
  const sorted = [...entries].sort(byRunId);
  const ids = new Set(sorted.map((e) => e.run_id));
  const children = new Map<string, T[]>();
  for (const e of sorted) {
    if (!e.prev || !ids.has(e.prev.run_id)) continue;
    const list = children.get(e.prev.run_id) ?? [];
    list.push(e);
    children.set(e.prev.run_id, list);
  }
  const out: T[] = sorted.filter((e) => e.prev === undefined);
  const seen = new Set<T>(out);
  const visit = (start: T): void => {
    const stack = [start];
    while (stack.length) {
      const e = stack.pop() as T;
      if (seen.has(e)) continue;
      seen.add(e);
      out.push(e);
      stack.push(...[...(children.get(e.run_id) ?? [])].reverse());
    }
  };
  for (const e of sorted) if (e.prev !== undefined && (e.prev === null || !ids.has(e.prev.run_id))) visit(e);
  for (const e of sorted) if (!seen.has(e)) visit(e);
  return out;
}

/**
 * Check one cluster's records (any order). Returns the problems found (empty: the chain is
 * intact). Entries written before chaining existed (`prev === undefined`, no digest) are only
 * accepted before the first chained record. The order checked is the links' ({@link chainOrder}).
 */
export function verifyChain(cluster: string, entries: ChainEntry[]): ChainProblem[] {
  const ordered = chainOrder(entries);
  const byId = new Map(ordered.map((e) => [e.run_id, e]));
  const followers = new Map<string, ChainEntry[]>();
  for (const e of ordered) if (e.prev) followers.set(e.prev.run_id, [...(followers.get(e.prev.run_id) ?? []), e]);
  const problems: ChainProblem[] = [];
  const firstChained = ordered.findIndex((e) => e.prev !== undefined);
  const legacyAfter = ordered.filter((e) => e.prev === undefined && firstChained !== -1 && e.run_id > (ordered[firstChained]?.run_id ?? ''));
  for (const e of legacyAfter) problems.push({ cluster, run_id: e.run_id, kind: 'unlinked', message: `${e.where}: record of run ${e.run_id} carries no link to the previous record (written by hand, or its link was removed)` });
  ordered.forEach((e, i) => {
    if (e.prev === undefined) return;
    if (!e.digestOk) problems.push({ cluster, run_id: e.run_id, kind: 'edited', message: `${e.where}: record of run ${e.run_id} was edited (its text does not match its digest)` });
    if (e.prev === null) {
      const before = ordered.slice(0, i).reverse().find((x) => x.prev !== undefined);
      if (before) problems.push({ cluster, run_id: e.run_id, kind: 'reordered', message: `${e.where}: record of run ${e.run_id} claims to be the first of ${cluster}, but run ${before.run_id} comes before it` });
      return;
    }
    const linked = byId.get(e.prev.run_id);
    if (!linked) {
      // the start of the chain may point at a record pruned by retention
      if (i !== firstChained) problems.push({ cluster, run_id: e.run_id, kind: 'missing', message: `record of run ${e.prev.run_id} of ${cluster} is missing (run ${e.run_id} follows it, ${e.where})` });
      return;
    }
    const siblings = followers.get(linked.run_id) ?? [];
    if (siblings.length > 1 && siblings[0] !== e) {
      problems.push({ cluster, run_id: e.run_id, kind: 'reordered', message: `${e.where}: run ${e.run_id} follows run ${linked.run_id}, but so does run ${siblings[0]?.run_id ?? '?'} (a record inserted, or written without the cluster's lock)` });
    }
    if (linked.sha256 !== e.prev.sha256) {
      problems.push({ cluster, run_id: linked.run_id, kind: 'edited', message: `${linked.where}: record of run ${linked.run_id} was edited (run ${e.run_id} recorded another hash for it)` });
    }
  });
  return problems;
}
