#!/usr/bin/env node
// ansible-core's own integration targets, unchanged, run as `ansible-test integration` runs them on
// the controller (test/peers/acore-lib.mjs) — under real `ansible-playbook` (the venv of
// test/bench/install.sh) and under kplay (an `ansible-playbook` on PATH that is `kplay run`) — and a
// table of both outcomes.
//
//   node test/peers/acore-targets.mjs [--src DIR] [--engine both|kplay|ansible] [--only a,b | --all] [--jobs 2] [--timeout 600] [--logs DIR] [--json FILE] [-v]
//
// DIR is the unpacked ansible-core sdist (default: the cache test/peers/install.sh fills,
// ~/.cache/kplay-bench/peers/ansible-core-2.19.14). Without --only: the targets of
// test/peers/acore-targets.json (the feature targets kplay claims, with their reference outcome);
// --all: every controller-side target of the sdist. `npm run build` first. Each run's output goes to
// --logs (default: a temp dir, printed at the end).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { defaultSrc, engineBin, pool, repo, runTarget } from './acore-lib.mjs';

const { values: o } = parseArgs({
  options: {
    src: { type: 'string' },
    engine: { type: 'string', default: 'both' },
    only: { type: 'string' },
    all: { type: 'boolean', default: false },
    jobs: { type: 'string', default: '2' },
    timeout: { type: 'string', default: '600' },
    logs: { type: 'string' },
    json: { type: 'string' },
    v: { type: 'boolean', short: 'v', default: false },
  },
});
const src = o.src ?? defaultSrc();
const targetsDir = path.join(src, 'test/integration/targets');
if (!existsSync(targetsDir)) {
  console.error(`no ${targetsDir}: run \`bash test/peers/install.sh\` (or pass --src UNPACKED_ANSIBLE_CORE_SDIST)`);
  process.exit(2);
}
const listed = JSON.parse(readFileSync(path.join(repo, 'test/peers/acore-targets.json'), 'utf8')).targets;
function controllerTargets() {
  return readdirSync(targetsDir).filter((t) => {
    const a = path.join(targetsDir, t, 'aliases');
    if (!existsSync(a)) return false;
    const text = readFileSync(a, 'utf8');
    return /context\/controller/.test(text) && !/\b(disabled|unsupported|hidden|needs\/root|needs\/ssh|needs\/httptester|destructive|windows|cloud\/)/.test(text);
  }).sort();
}
const targets = o.only ? o.only.split(',') : o.all ? controllerTargets() : listed.map((t) => t.name);
const engines = o.engine === 'both' ? ['ansible', 'kplay'] : [o.engine];
const logs = o.logs ?? mkdtempSync(path.join(os.tmpdir(), 'acore-targets-'));
mkdirSync(logs, { recursive: true });
const binRoot = mkdtempSync(path.join(os.tmpdir(), 'acore-bin-'));

const results = [];
for (const engine of engines) {
  const bin = engineBin(engine, binRoot);
  const rs = await pool(targets, Number(o.jobs), async (target) => {
    const r = await runTarget({ src, target, engine, bin, timeoutS: Number(o.timeout), verbose: o.v });
    writeFileSync(path.join(logs, `${target}.${engine}.log`), r.output);
    console.log(`${engine.padEnd(7)} ${target.padEnd(36)} exit ${String(r.exit).padEnd(3)} ${String(r.seconds).padStart(6)} s  ${r.exit ? r.first : ''}`);
    return r;
  });
  results.push(...rs);
}
console.log('');
console.log(`| target | ${engines.join(' | ')} |`);
console.log(`|---|${engines.map(() => '---').join('|')}|`);
for (const t of targets) console.log(`| ${t} | ${engines.map((e) => { const r = results.find((x) => x.engine === e && x.target === t); return r.exit === 0 ? `pass (${r.seconds} s)` : `FAIL exit ${r.exit}`; }).join(' | ')} |`);
for (const e of engines) console.log(`${e}: ${results.filter((r) => r.engine === e && r.exit === 0).length}/${targets.length} passed, ${Math.round(results.filter((r) => r.engine === e).reduce((a, r) => a + r.seconds, 0))} s`);
console.log(`logs: ${logs}`);
if (o.json) writeFileSync(o.json, JSON.stringify(results.map(({ output: _output, ...r }) => r), null, 2));
