/**
 * Where each cluster's chain of local run records ends, kept next to the records:
 * `<record dir>/head-<cluster>.json` (the name URI-encoded) holds `{run_id, sha256}` of the last local record written
 * for that cluster. Linking a new record then reads that record and the ones named after it, not
 * the first line of every record in the directory (which grew with every run: 80 ms of a run's
 * end with 750 records, seconds with tens of thousands).
 *
 * A head is a shortcut, never the truth: it is used only when its record exists, still has the
 * digest the head names and is a record of that cluster; otherwise (no head yet, a record removed
 * or edited, a directory written by a kplay before heads) the records are read as before.
 * `kplay history verify` checks the chains themselves and does not read heads.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isRecord } from '../core/shape.js';

/** The end of one cluster's local chain: the record's run id and the SHA-256 of its whole file. */
export interface ChainHead {
  run_id: string;
  sha256: string;
}

/** The file holding `cluster`'s head in record directory `dir` (the name encoded: inventory names may hold `/`). */
export function headFile(dir: string, cluster: string): string {
  // next to the records, not in a sub-directory: the record directory stays a directory of files
  return path.join(dir, `head-${encodeURIComponent(cluster)}.json`);
}

/** `cluster`'s head, or `undefined` when there is none or it cannot be read. Not yet checked against its record. */
export async function readHead(dir: string, cluster: string): Promise<ChainHead | undefined> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(headFile(dir, cluster), 'utf8'));
  } catch {
    return undefined;
  }
  return isRecord(parsed) && typeof parsed.run_id === 'string' && typeof parsed.sha256 === 'string' ? { run_id: parsed.run_id, sha256: parsed.sha256 } : undefined;
}

/**
 * Record `head` as the end of each of `clusters`' chains (after its record was written). Each
 * head file is replaced whole (written aside, then renamed), so a reader never sees half of one.
 */
export async function writeHeads(dir: string, clusters: readonly string[], head: ChainHead): Promise<void> {
  const text = `${JSON.stringify(head)}\n`;
  await Promise.all(
    clusters.map(async (c) => {
      const file = headFile(dir, c);
      const tmp = `${file}.${process.pid}.tmp`;
      await writeFile(tmp, text, { mode: 0o600 });
      await rename(tmp, file);
    }),
  );
}

