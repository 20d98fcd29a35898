// B14: kubernetes.core 6.2.0's own integration targets, unchanged, run as their runme.sh runs them
// (test/peers/kcore-lib.mjs, the runner of test/integration/kcore-targets.test.ts) under kplay as
// `ansible-playbook` and under the real ansible-playbook, one after the other in the same bench run
// on the same sandbox cluster (settled before each target). The targets: those
// test/peers/kcore-targets.json lists as passing under both engines (--quick: the two shortest).
// Issue #49's goal: kplay's wall time <= 0.2x the reference's over those targets.
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DEFAULT_SRC, repo, runTarget, settle, targetsDir, workspace } from '../peers/kcore-lib.mjs';

/** The targets both engines pass here (test/peers/kcore-targets.json), shortest first. */
function bothPass() {
  const { targets } = JSON.parse(fs.readFileSync(path.join(repo, 'test/peers/kcore-targets.json'), 'utf8'));
  return targets
    .filter((t) => t.ansible === 'pass' && t.kplay === 'pass')
    .sort((a, b) => (a.ansibleSeconds ?? 0) - (b.ansibleSeconds ?? 0) || a.name.localeCompare(b.name))
    .map((t) => t.name);
}

/** Title and row names of B14 (for the bench table). */
export const B14_TITLE = "kubernetes.core's own integration targets (runme.sh, unchanged) under kplay vs ansible-playbook";
export const b14Rows = (quick) => [`B14 kubernetes.core targets x ${quick ? 2 : bothPass().length} (both engines pass)`];

/** Runs B14; returns its one row. */
export async function b14(env) {
  const names = bothPass();
  const chosen = env.quick ? names.slice(0, 2) : names;
  const dir = targetsDir(DEFAULT_SRC);
  if (!fs.existsSync(dir)) throw new Error(`B14: no kubernetes.core targets at ${dir}: run bash test/peers/install.sh`);
  const context = env.clusters[env.clusters.length - 1].context;
  const logs = path.join(env.work, 'b14-logs');
  const totals = { kplay: 0, ansible: 0 };
  const failed = [];
  const perTarget = [];
  for (const engine of ['kplay', 'ansible']) {
    const ws = workspace(engine, dir);
    for (const target of chosen) {
      const left = await settle({ kubectl: env.kubectlBin, kubeconfig: env.kubeconfig, context });
      if (left) throw new Error(`B14: the cluster did not settle before ${target}: ${left}`);
      const t0 = performance.now();
      const r = await runTarget(ws, target, { kubeconfig: env.kubeconfig, context, logs, timeoutSeconds: 900 });
      const ms = performance.now() - t0;
      totals[engine] += ms;
      perTarget.push(`${target} ${engine[0]}${(ms / 1000).toFixed(1)}`);
      if (r.exit !== 0) failed.push(`${target} under ${engine} (exit ${r.exit}: ${r.first || 'see'} ${r.log})`);
    }
  }
  const ok = failed.length === 0;
  const ratio = totals.ansible > 0 ? totals.kplay / totals.ansible : null;
  return [
    {
      bench: b14Rows(env.quick)[0],
      kplay_ms: Math.round(totals.kplay),
      peer_ms: Math.round(totals.ansible),
      ratio,
      goal: '<= 0.2x',
      met: ok && ratio !== null && ratio <= 0.2,
      kplay_requests: null,
      kplay_writes: null,
      peer_requests: null,
      peer_writes: null,
      notes: `${chosen.join(', ')}; on ${context}, settled before each; seconds per target (k=kplay, a=ansible-playbook): ${perTarget.join(', ')}${ok ? '' : `; FAILED: ${failed.join('; ')}`}`,
      samples: { k: [Math.round(totals.kplay)], p: [Math.round(totals.ansible)] },
    },
  ];
}
