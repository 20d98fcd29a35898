// kubernetes.core 6.2.0's own integration targets, unchanged, run as their runme.sh runs them with
// kplay as `ansible-playbook`, against sandbox-3 (the targets come from the `ansible` 12.3.0 sdist that
// test/peers/install.sh unpacks; the runner is test/peers/kcore-lib.mjs, shared with the developer's
// tool test/peers/kcore-targets.mjs that runs both engines).
//
// test/peers/kcore-targets.json states, for every target the runner would pick, its outcome under
// the reference (ansible-playbook 2.19.14 + kubernetes.core 6.2.0 on this sandbox) and kplay's:
// `pass`, or a difference with its reason (a README row). Every target that passes under the
// reference and is not such a stated difference must pass under kplay.
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultTargets, DEFAULT_SRC, runTarget, settle, targetsDir, workspace, type Workspace } from '../peers/kcore-lib.mjs';
import { repoRoot } from '../helpers/cli.js';
import { sandboxEnv } from '../sandbox/env.js';

/** One target's measured outcomes (an entry of test/peers/kcore-targets.json). */
interface Listed {
  name: string;
  /** under ansible-playbook here (`not measured`: the reference's run did not finish this session) */
  ansible: 'pass' | 'fail' | 'not measured';
  /** under kplay: `pass`; `fail` as under the reference (its `reason`); `differs` with `reason` (a README row) */
  kplay: 'pass' | 'fail' | 'differs';
  /** why a target fails under the reference here, or why kplay differs */
  reason?: string;
  /** the reference's wall time here, seconds */
  ansibleSeconds?: number;
}
const listed = (JSON.parse(readFileSync(path.join(repoRoot, 'test/peers/kcore-targets.json'), 'utf8')) as { targets: Listed[] }).targets;
const dir = targetsDir(DEFAULT_SRC);
const CONTEXT = 'sandbox-3';
const logs = mkdtempSync(path.join(os.tmpdir(), 'kcore-targets-'));
let ws: Workspace;
let kubeconfig: string;
let kubectl: string;

beforeAll(() => {
  const env = sandboxEnv();
  kubeconfig = env.kubeconfig;
  kubectl = path.join(env.binDir, 'kubectl');
  ws = workspace('kplay', dir);
});

describe('kubernetes.core 6.2.0 integration targets under kplay', () => {
  it('every target the runner picks has a stated outcome, and every difference a reason', () => {
    expect(listed.map((t) => t.name).sort()).toEqual(defaultTargets(dir));
    for (const t of listed) if (t.ansible !== 'pass' || t.kplay !== 'pass') expect(t.reason, t.name).toMatch(/\S/);
    // kplay fails only where the reference fails too, or where a README row says why
    for (const t of listed) if (t.kplay === 'fail') expect(t.ansible, t.name).toBe('fail');
  });

  // a target kplay passes is asserted whatever the reference did here (its own asserts are the judge)
  for (const target of listed.filter((t) => t.kplay === 'pass').map((t) => t.name)) {
    it(`${target} passes`, async () => {
      // each target starts on a settled cluster (the previous one's namespace deletion is not awaited)
      expect(await settle({ kubectl, kubeconfig, context: CONTEXT }), 'objects still being deleted before the target').toBe('');
      const r = await runTarget(ws, target, { kubeconfig, context: CONTEXT, logs, timeoutSeconds: 600 });
      // on failure: the first failing line and the end of the output
      expect({ target, exit: r.exit, first: r.exit === 0 ? '' : r.first, tail: r.exit === 0 ? '' : r.text.split('\n').slice(-40).join('\n') }).toEqual({ target, exit: 0, first: '', tail: '' });
    }, 660_000);
  }
});
