#!/usr/bin/env node
// kubernetes.core's own integration targets, unchanged, run as their runme.sh runs them — under real
// `ansible-playbook` (the venv of test/bench/install.sh) and under kplay (an `ansible-playbook` on
// PATH that is `kplay run`) — against a sandbox cluster; prints a table of both outcomes.
//
//   node test/peers/kcore-targets.mjs [--src DIR] [--engine both|kplay|ansible] [--only a,b] [--cluster sandbox-1] [--timeout 900] [--json FILE]
//
// DIR is a checkout of github.com/ansible-collections/kubernetes.core at the tag the reference
// installs (6.2.0); by default the targets test/peers/install.sh unpacks from the `ansible` 12.3.0
// sdist (the same files). `npm test` runs the kplay side of kcore-targets.json
// (test/integration/kcore-targets.test.ts); this tool runs both engines. The sandbox must be running
// (`npm run sandbox -- up`); `npm run build` first. Each engine gets its own copy of the targets and
// its own log per target under --logs (default: a temp dir, printed at the end).
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_SRC, defaultTargets, runTarget, settle, targetsDir, workspace } from './kcore-lib.mjs';

const { values: o } = parseArgs({
  options: {
    src: { type: 'string', default: DEFAULT_SRC },
    engine: { type: 'string', default: 'both' },
    only: { type: 'string' },
    cluster: { type: 'string', default: 'sandbox-1' },
    timeout: { type: 'string', default: '900' },
    logs: { type: 'string' },
    json: { type: 'string' },
  },
});
const dir = targetsDir(o.src);
const state = JSON.parse(readFileSync(path.join(os.homedir(), '.cache/kplay-sandbox/run/state.json'), 'utf8'));
const kubeconfig = state.kubeconfig ?? path.join(os.homedir(), '.cache/kplay-sandbox/run/kubeconfig');
const targets = o.only ? o.only.split(',') : defaultTargets(dir);
const engines = o.engine === 'both' ? ['ansible', 'kplay'] : [o.engine];
const logs = o.logs ?? mkdtempSync(path.join(os.tmpdir(), 'kcore-targets-'));
mkdirSync(logs, { recursive: true });

const results = [];
for (const engine of engines) {
  const ws = workspace(engine, dir);
  for (const target of targets) {
    const going = await settle({ kubectl: path.join(state.binDir, 'kubectl'), kubeconfig, context: o.cluster });
    if (going) console.log(`(still being deleted before ${target}: ${going})`);
    const r = await runTarget(ws, target, { kubeconfig, context: o.cluster, logs, timeoutSeconds: Number(o.timeout) });
    delete r.text;
    results.push(r);
    console.log(`${engine.padEnd(7)} ${target.padEnd(28)} exit ${String(r.exit).padEnd(3)} ${String(r.seconds).padStart(4)} s  ${r.exit ? r.first : ''}`);
  }
}
console.log('');
console.log(`| target | ${engines.join(' | ')} |`);
console.log(`|---|${engines.map(() => '---').join('|')}|`);
for (const t of targets) console.log(`| ${t} | ${engines.map((e) => { const r = results.find((x) => x.engine === e && x.target === t); return r.exit === 0 ? `pass (${r.seconds} s)` : `FAIL exit ${r.exit}`; }).join(' | ')} |`);
for (const e of engines) console.log(`${e}: ${results.filter((r) => r.engine === e && r.exit === 0).length}/${targets.length} passed, ${results.filter((r) => r.engine === e).reduce((a, r) => a + r.seconds, 0)} s`);
console.log(`logs: ${logs}`);
if (o.json) writeFileSync(o.json, JSON.stringify(results, null, 2));
