// ansible-core's own integration targets (test/integration/targets of the ansible-core 2.19.14 sdist,
// which test/peers/install.sh fetches from PyPI into ~/.cache/kplay-bench/peers), unchanged, run as
// `ansible-test integration` runs them on the controller (test/peers/acore-lib.mjs), under kplay:
// every target test/peers/acore-targets.json lists as passing under ansible-playbook here must pass
// under kplay, except those the list marks `kplay: "differs"`, each with its reason and a README row
// (README "ansible-core's integration targets"). The reference outcomes in the list come from
// `node test/peers/acore-targets.mjs --engine ansible` (the venv of test/bench/install.sh).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSrc, engineBin, pool, runTarget, type TargetResult } from '../peers/acore-lib.mjs';
import { repoRoot } from '../helpers/cli.js';

/** One entry of test/peers/acore-targets.json. */
interface Listed {
  name: string;
  /** The outcome under ansible-playbook 2.19.14 here. */
  ansible: 'pass' | 'fail';
  /** kplay's: "pass" (asserted) or "differs" (a README row says why). */
  kplay: 'pass' | 'differs';
  /** Why kplay differs (the README row's words). */
  reason?: string;
}

const src = defaultSrc();
const listed = (JSON.parse(readFileSync(path.join(repoRoot, 'test/peers/acore-targets.json'), 'utf8')) as { targets: Listed[] }).targets;
const expected = listed.filter((t) => t.ansible === 'pass' && t.kplay === 'pass');
const differing = listed.filter((t) => t.ansible === 'pass' && t.kplay === 'differs');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-acore-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const results = new Map<string, TargetResult>();
let seconds = 0;

describe("ansible-core 2.19.14's integration targets under kplay, as ansible-test runs them", () => {
  beforeAll(async () => {
    if (!existsSync(path.join(src, 'test/integration/targets'))) return;
    const bin = engineBin('kplay', tmp);
    const t0 = Date.now();
    // three at a time: each is a few short kplay runs (the whole list takes about a minute)
    const rs = await pool(expected.map((t) => t.name), 3, (target) => runTarget({ src, target, engine: 'kplay', bin, timeoutS: 120 }));
    for (const r of rs) results.set(r.target, r);
    seconds = (Date.now() - t0) / 1000;
  }, 900_000);

  it('the sdist is unpacked (bash test/peers/install.sh)', () => {
    expect(existsSync(path.join(src, 'test/integration/targets')), `${src} missing: run bash test/peers/install.sh`).toBe(true);
    console.log(`acore targets: ${expected.length} run under kplay in ${seconds.toFixed(0)} s`);
  });

  it.each(expected.map((t) => t.name))('%s passes', (name) => {
    const r = results.get(name);
    expect(r, 'not run').toBeDefined();
    expect(r?.exit, `${name} under kplay: ${r?.first ?? ''}\n${(r?.output ?? '').slice(-3000)}`).toBe(0);
  });

  it('every target kplay differs on has its reason and a README row', () => {
    const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
    for (const t of differing) {
      expect(t.reason, `${t.name}: no reason`).toBeTruthy();
      expect(readme, `README has no row for ${t.name}`).toContain(`| \`${t.name}\` |`);
    }
  });
});
