/**
 * The digest of a run's inputs, for plans: every file under the playbook's directory (task files,
 * vars files, templates, charts kept with the playbook), the inventory (its file plus
 * `group_vars/` and `cluster_vars/`), the extra variables (hashed, never stored), the modules
 * (name, source and the SHA-256 of their code) and kplay's version. Per-file hashes are kept so a
 * refusal can name what changed. Known secrets are masked before hashing (extra variables, and
 * the text of every file), so the plan holds no hash a secret could be guessed from.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { canonicalJson } from '../k8s/normalize.js';
import { sha256 } from '../audit/chain.js';
import type { Inventory } from '../inventory/types.js';
import type { ModuleRegistry } from '../plugins/registry.js';

/** kplay's version (recorded in plans). */
export const KPLAY_VERSION = '0.1.0';

/** What a plan was computed from. */
export interface InputsDigest {
  /** SHA-256 over everything below. */
  digest: string;
  kplay: string;
  /** Path (relative to the working directory) → SHA-256, for the playbook directory and the inventory. */
  files: Record<string, string>;
  /** SHA-256 of the extra variables (`-e`, secrets masked), canonical JSON: values are never stored. */
  extra_vars: string;
  /** Module name → SHA-256 of its source (built-in, `--module-path`, npm package). */
  modules: Record<string, string>;
}

const MAX_FILES = 20_000;
const MAX_FILE_BYTES = 64 << 20;

async function walk(dir: string, out: string[]): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (out.length >= MAX_FILES) return;
    if (e.name.startsWith('.') || e.name === 'node_modules') continue; // .kplay/ (run records), .git/, caches
    const p = path.join(dir, e.name);
    if (e.isDirectory()) await walk(p, out);
    else if (e.isFile()) out.push(p);
  }
}

/**
 * SHA-256 of a file. With `mask`, a text file is hashed with the run's known secrets masked: a
 * hash of a small secret file (or of a file whose only unknown part is a secret) could otherwise be
 * brute-forced from the plan. A changed secret value is then not an input change.
 */
async function fileHash(file: string, mask?: (text: string) => string): Promise<string | undefined> {
  try {
    const st = await stat(file);
    if (!st.isFile() || st.size > MAX_FILE_BYTES) return st.isFile() ? `size:${st.size}:mtime:${st.mtimeMs}` : undefined;
    const bytes = await readFile(file);
    const h = createHash('sha256');
    if (mask) h.update(mask(bytes.toString('utf8')));
    else h.update(bytes);
    return h.digest('hex');
  } catch {
    return undefined;
  }
}

/** Compute the digest of the inputs of a run (`exclude`: files left out, such as the plan file). */
export async function inputsDigest(opts: { playbookDir: string; inventory?: Inventory; extraVars: Record<string, unknown>; registry: ModuleRegistry; cwd?: string; exclude?: string[]; mask?: (text: string) => string }): Promise<InputsDigest> {
  const cwd = opts.cwd ?? process.cwd();
  const excluded = new Set((opts.exclude ?? []).map((f) => path.resolve(cwd, f)));
  const paths: string[] = [];
  await walk(opts.playbookDir, paths);
  if (opts.inventory) {
    paths.push(opts.inventory.source);
    for (const sub of ['group_vars', 'cluster_vars']) await walk(path.join(opts.inventory.dir, sub), paths);
  }
  const files: Record<string, string> = {};
  for (const p of [...new Set(paths)].sort()) {
    if (excluded.has(path.resolve(p))) continue; // the plan file itself
    const h = await fileHash(p, opts.mask);
    if (h !== undefined) files[path.relative(cwd, p) || p] = h;
  }
  const modules: Record<string, string> = {};
  for (const { name, source } of opts.registry.sources()) {
    const h = (await fileHash(source)) ?? (await fileHash(path.join(source, 'package.json'))) ?? 'unknown';
    modules[name] = h;
  }
  const content = { kplay: KPLAY_VERSION, files, extra_vars: sha256(canonicalJson(opts.extraVars)), modules };
  return { digest: sha256(canonicalJson(content)), ...content };
}

/** What changed between two input digests, as readable lines (empty: the same inputs). */
export function inputChanges(before: InputsDigest, now: InputsDigest): string[] {
  const out: string[] = [];
  if (before.kplay !== now.kplay) out.push(`kplay ${before.kplay} → ${now.kplay}`);
  for (const f of Object.keys(before.files)) {
    if (!(f in now.files)) out.push(`file removed: ${f}`);
    else if (now.files[f] !== before.files[f]) out.push(`file changed: ${f}`);
  }
  for (const f of Object.keys(now.files)) if (!(f in before.files)) out.push(`file added: ${f}`);
  if (before.extra_vars !== now.extra_vars) out.push('extra variables (-e) differ: pass the same -e values as for kplay plan');
  for (const m of new Set([...Object.keys(before.modules), ...Object.keys(now.modules)])) {
    if (before.modules[m] !== now.modules[m]) out.push(`module ${m} ${!(m in now.modules) ? 'is gone' : !(m in before.modules) ? 'was added' : 'changed'}`);
  }
  return out;
}
