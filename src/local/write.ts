/**
 * Putting content at a local destination as Ansible's `copy`/`template` do: idempotent by SHA-1,
 * atomic (temporary file in the same directory, renamed over), `force`, `backup`, `validate`,
 * owner/group/mode, diff of text content, and the result fields Ansible returns (changed: `dest`,
 * `src`, `checksum`, `md5sum` + path info; unchanged: `dest`, `path`, `checksum` + path info).
 */
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { DiffEntry, ModuleContext, ModuleResult } from '../core/module.js';
import { runProcess } from '../core/process.js';
import { contentDiff } from './diff.js';
import { applyAttrs, digest, pathInfo, type ModeArg } from './files.js';
import { shlexSplit } from './kv.js';

/** What to write, and how. */
export interface WriteSpec {
  /** Absolute destination file. */
  dest: string;
  /** The bytes wanted there. */
  content: Buffer;
  /** What `src` reports (the source file; none for inline content). */
  src?: string;
  mode?: ModeArg | 'preserve';
  /** Mode of the source, for `mode: preserve`. */
  srcMode?: number;
  owner?: string;
  group?: string;
  /** Overwrite a destination whose content differs. */
  force: boolean;
  /** Keep a timestamped copy of the old file. */
  backup: boolean;
  /** A command run on the new content before it is put in place (`%s` is the file). */
  validate?: string;
}

/** Data of {@link writeDest}'s result. */
export type WriteData = { [key: string]: unknown; dest: string };

/** The name of a backup, as Ansible's `backup_local`: `dest.PID.YYYY-MM-DD@HH:MM:SS~`. */
function backupName(dest: string): string {
  const d = new Date();
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${dest}.${process.pid}.${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}@${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}~`;
}

/** Whether bytes look like text (for the diff): no NUL in the first 8 KiB, valid UTF-8. */
function isText(b: Buffer): boolean {
  if (b.subarray(0, 8192).includes(0)) return false;
  return Buffer.from(b.toString('utf8'), 'utf8').equals(b);
}

/** Write `spec.content` to `spec.dest` as Ansible's copy/template do (see the file header). */
export async function writeDest(spec: WriteSpec, ctx: ModuleContext): Promise<ModuleResult<WriteData>> {
  const { dest } = spec;
  const sum = digest(spec.content, 'sha1');
  const exists = existsSync(dest);
  if (exists && statSync(dest).isDirectory()) return { status: 'failed', msg: `dest ${dest} is a directory`, data: { dest } };
  const old = exists ? readFileSync(dest) : undefined;
  const same = old !== undefined && digest(old, 'sha1') === sum;
  const mode = spec.mode === 'preserve' ? spec.srcMode : spec.mode;
  let changed = false;
  let diff: DiffEntry[] | undefined;
  const data: WriteData = { dest };
  if (!same && (!exists || spec.force)) {
    const dir = path.dirname(dest);
    if (!existsSync(dir)) return { status: 'failed', msg: `Destination directory ${dir} does not exist`, data: { dest } };
    changed = true;
    if (ctx.diffMode) {
      const before = old ?? Buffer.alloc(0);
      diff = isText(before) && isText(spec.content) ? [contentDiff(dest, before.toString('utf8'), spec.content.toString('utf8'), old !== undefined)] : [{ label: dest, before: '(binary)', after: '(binary)' }];
    }
    if (!ctx.checkMode) {
      const tmpDir = mkdtempSync(path.join(dir, '.kplay-tmp-'));
      const tmp = path.join(tmpDir, path.basename(dest));
      try {
        writeFileSync(tmp, spec.content);
        if (exists) chmodSync(tmp, statSync(dest).mode & 0o7777);
        if (spec.validate !== undefined) {
          if (!spec.validate.includes('%s')) return { status: 'failed', msg: `validate must contain %s: ${spec.validate}`, data: { dest } };
          let argv: string[];
          try {
            argv = shlexSplit(spec.validate.replace(/%s/g, tmp));
          } catch (e) {
            return { status: 'failed', msg: `validate: ${(e as Error).message}`, data: { dest } };
          }
          const [prog, ...rest] = argv;
          const r = prog === undefined ? undefined : await runProcess(prog, rest, { signal: ctx.signal });
          if (!r || r.error || r.code !== 0) {
            return { status: 'failed', msg: `failed to validate`, data: { dest, exit_status: r?.code ?? null, stdout: r?.stdout ?? '', stderr: r?.error ? r.error.message : (r?.stderr ?? '') } };
          }
        }
        if (spec.backup && exists) {
          const b = backupName(dest);
          copyFileSync(dest, b);
          data.backup_file = b;
        }
        renameSync(tmp, dest);
      } finally {
        rmSync(tmpDir, { recursive: true, force: true });
      }
    }
  }
  let attrs;
  try {
    attrs = applyAttrs(dest, { mode, owner: spec.owner, group: spec.group }, ctx.checkMode);
  } catch (e) {
    return { status: 'failed', msg: (e as Error).message, data: { dest } };
  }
  changed = changed || attrs.changed;
  const info = existsSync(dest) ? pathInfo(dest) : {};
  if (changed && !same) Object.assign(data, { dest, ...(spec.src === undefined ? {} : { src: spec.src }), checksum: sum, md5sum: digest(spec.content, 'md5'), ...info });
  else Object.assign(data, { dest, path: dest, checksum: sum, ...info });
  // in check mode a file that is not there yet has no attributes: say what it would be
  if (ctx.checkMode && !existsSync(dest)) Object.assign(data, { state: 'file', size: spec.content.length });
  return { status: changed ? 'changed' : 'ok', data, ...(diff ? { diff } : {}) };
}
