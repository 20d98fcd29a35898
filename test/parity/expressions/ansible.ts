// Runs ansible_eval.py (ansible-core's own templar, in the venv of test/bench/install.sh) once over a
// whole batch of cases and returns its outcome per case id.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ExprCase } from './cases.js';
import type { Outcome } from './compare.js';
import { isRecord } from '../../../src/core/shape.js';

/** The Ansible venv (`KPLAY_BENCH_VENV` overrides). */
export const VENV = process.env.KPLAY_BENCH_VENV ?? path.join(os.homedir(), '.cache/kplay-bench/venv');
const SCRIPT = fileURLToPath(new URL('./ansible_eval.py', import.meta.url));

function toOutcome(line: string): [string, Outcome] {
  const doc: unknown = JSON.parse(line);
  if (!isRecord(doc) || typeof doc['id'] !== 'string') throw new Error(`ansible_eval.py printed an unexpected line: ${line.slice(0, 200)}`);
  if (doc['ok'] === true && typeof doc['type'] === 'string') return [doc['id'], { ok: true, value: doc['value'], type: doc['type'] }];
  return [doc['id'], { ok: false, error: typeof doc['error'] === 'string' ? doc['error'] : 'unknown error' }];
}

/**
 * Evaluate every case with ansible-core; `env` is added to the process environment (lookups such as
 * `env` and `file` must see the same world as kplay), `basedir` is the DataLoader's base directory.
 */
export function evaluateWithAnsible(cases: readonly ExprCase[], env: Record<string, string>, basedir: string): Promise<Map<string, Outcome>> {
  const python = path.join(VENV, 'bin/python');
  if (!existsSync(path.join(VENV, 'bin/ansible-playbook'))) {
    return Promise.reject(new Error(`no Ansible venv at ${VENV}: run \`bash test/bench/install.sh\` (or set KPLAY_BENCH_VENV)`));
  }
  const batch = cases.map((c) => ({ id: c.id, kind: c.kind, text: c.text, vars: c.vars }));
  return new Promise((resolve, reject) => {
    // a fixed hash seed: the same set order (union, difference, ...) on every run
    const child = spawn(python, [SCRIPT, basedir], { env: { ...process.env, PYTHONHASHSEED: '0', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (code) => {
      const stderr = Buffer.concat(err).toString('utf8');
      if (code !== 0) {
        reject(new Error(`ansible_eval.py exited ${String(code)}: ${stderr.slice(-2000)}`));
        return;
      }
      try {
        const lines = Buffer.concat(out).toString('utf8').split('\n').filter((l) => l.trim() !== '');
        const results = new Map(lines.map(toOutcome));
        const missing = cases.filter((c) => !results.has(c.id));
        if (missing.length) throw new Error(`ansible_eval.py gave no result for ${missing.length} cases (first: ${missing[0]?.id ?? ''}); stderr: ${stderr.slice(-1000)}`);
        resolve(results);
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    });
    child.stdin.end(JSON.stringify(batch));
  });
}
