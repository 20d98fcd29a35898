/**
 * Where a new local record links: the end of each cluster's chain in the record directory, from
 * the cluster's head (`chain-heads.ts`) checked against its record, or from the records' first
 * lines (see {@link previousLinks}). Run under `records.lock` by the run recorder's local write (`record.ts`).
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { chainOrder, sha256, type ChainLink } from './chain.js';
import { asLink, firstLine } from './record-read.js';
import { readHead, type ChainHead } from './chain-heads.js';
import { isRecord } from '../core/shape.js';

/**
 * Links to the last local record written for each cluster (`null`: none): the end of each
 * cluster's chain as the links give it ({@link chainOrder}), not the newest run id — a run that
 * started earlier can write its record later (it waited for the cluster's lock). From the
 * cluster's head (see `chain-heads.ts`), checked against its record, and the records named after
 * it; without a usable head, from the first line of the records newest first, back to the first
 * record written before chaining existed (everything older is unchained too). Hashes only the
 * records it links to.
 */
export async function previousLinks(dir: string, runId: string, clusters: string[]): Promise<Record<string, ChainLink | null>> {
  const out: Record<string, ChainLink | null> = Object.fromEntries(clusters.map((c) => [c, null]));
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.jsonl') && n !== `${runId}.jsonl`).sort().reverse();
  } catch {
    return out;
  }
  // a record read and hashed once, however many clusters' chains end at it (a run over 1,000 entries)
  // (rejects when the record cannot be read: a head's record is then ignored, a chain's last one fails the write)
  const hashed = new Map<string, Promise<Hashed>>();
  const readHashed = (file: string): Promise<Hashed> => {
    let p = hashed.get(file);
    if (!p) {
      p = readFile(file, 'utf8').then((text) => ({ text, sha256: sha256(text) }));
      hashed.set(file, p);
    }
    return p;
  };
  // first lines read once for all clusters (newest first), until the first unchained record
  const heads: Head[] = [];
  let scanned = 0;
  let ended = false;
  const headsDownTo = async (stop: number): Promise<Head[]> => {
    for (; scanned < stop && !ended; scanned++) {
      const file = path.join(dir, names[scanned] ?? '');
      let run: unknown;
      try {
        run = JSON.parse(await firstLine(file));
      } catch {
        continue; // not a record (or a damaged one): verification reports it
      }
      if (!isRecord(run) || typeof run.run_id !== 'string') continue;
      heads.push({ run_id: run.run_id, file, chain: isRecord(run.chain) ? run.chain : undefined });
      if (!isRecord(run.chain)) ended = true; // written before chaining: so is everything older
    }
    return heads;
  };
  for (const c of clusters) {
    const found = await checkedHead(dir, c, readHashed);
    // a head naming this run itself (its record written again) is not a predecessor: read the records
    const known = found?.head.run_id === runId ? undefined : found;
    // the records named after the head (all of them without one), and the head's own
    const newer = known ? names.findIndex((n) => n <= `${known.head.run_id}.jsonl`) : -1;
    const mine = (await headsDownTo(newer === -1 ? names.length : newer))
      .filter((h) => h.chain && c in h.chain && (!known || h.run_id > known.head.run_id))
      .map((h) => ({ ...h, prev: h.chain ? (asLink(h.chain[c]) ?? null) : undefined }));
    // With a head, the end is the head or a record linked after it (moved by no head: an older
    // kplay's): followed from the head along the links, never the last of `mine` in chain order —
    // a record named after the head may come before it in the chain (it started later but took
    // the lock earlier), and its predecessor is then not among those read (a fork, issue 50).
    const last = known ? fromHead({ run_id: known.head.run_id, file: known.file }, mine) : chainOrder(mine).at(-1);
    if (last) out[c] = { run_id: last.run_id, sha256: known && last.run_id === known.head.run_id ? known.head.sha256 : (await readHashed(last.file)).sha256 };
  }
  return out;
}

/**
 * The end of a chain that reaches `head`: `head`, or the last record of `after` linked to it,
 * link by link (where two link to one record — a fork verification reports — the later one in
 * chain order).
 */
function fromHead<T extends { run_id: string; prev: ChainLink | null | undefined }>(head: { run_id: string; file: string }, after: readonly (T & { file: string })[]): { run_id: string; file: string } {
  const order = chainOrder(after);
  let end: { run_id: string; file: string } = head;
  for (const seen = new Set([head.run_id]); ; ) {
    const next = order.filter((h) => h.prev?.run_id === end.run_id && !seen.has(h.run_id)).at(-1);
    if (!next) return end;
    seen.add(next.run_id);
    end = next;
  }
}

/** A local record's text and its digest. */
interface Hashed {
  text: string;
  sha256: string;
}

/** The first line of a local record, as {@link previousLinks} reads it. */
interface Head {
  run_id: string;
  file: string;
  chain: Record<string, unknown> | undefined;
}

/**
 * `cluster`'s head if it can be trusted: its record exists, has the digest the head names and
 * links `cluster`; with that record's link to its own predecessor.
 */
async function checkedHead(dir: string, cluster: string, readHashed: (file: string) => Promise<Hashed>): Promise<{ head: ChainHead; file: string; prev: ChainLink | null } | undefined> {
  const head = await readHead(dir, cluster);
  if (!head || !/^[\w.-]+$/.test(head.run_id)) return undefined;
  const file = path.join(dir, `${head.run_id}.jsonl`);
  const read = await readHashed(file).catch(() => undefined);
  if (!read || read.sha256 !== head.sha256) return undefined;
  const { text } = read;
  let run: unknown;
  try {
    run = JSON.parse(text.slice(0, text.indexOf('\n')));
  } catch {
    return undefined;
  }
  if (!isRecord(run) || run.run_id !== head.run_id || !isRecord(run.chain) || !(cluster in run.chain)) return undefined;
  return { head, file, prev: asLink(run.chain[cluster]) ?? null };
}
