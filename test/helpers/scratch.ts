// A scratch directory for one test file: created under the system's temp directory, removed after
// the file's tests; `write` puts a file in it (parents created, optional mode) and returns its path.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

/** A scratch directory and a writer of files in it. */
export interface Scratch {
  /** The directory. */
  root: string;
  /** Write `text` at `rel` under {@link Scratch.root} (with `mode` when given); returns the file's path. */
  write: (rel: string, text: string, mode?: number) => string;
}

/** A scratch directory named `prefix…`, removed once the test file's tests are done. */
export function scratch(prefix: string): Scratch {
  const root = mkdtempSync(path.join(tmpdir(), prefix));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (rel: string, text: string, mode?: number): string => {
    const p = path.join(root, rel);
    mkdirSync(path.dirname(p), { recursive: true });
    writeFileSync(p, text);
    if (mode !== undefined) chmodSync(p, mode);
    return p;
  };
  return { root, write };
}
