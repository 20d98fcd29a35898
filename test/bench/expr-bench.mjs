// B9 kplay side: the engine (built, dist/) evaluating the benchmark's expressions in one process,
// exactly as tasks do (conditions with evalConditionSync, arguments with renderSync). Prints the
// seconds spent in the loop (JSON), like expr_bench.py does for ansible-core's templar.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { templar } = await import(pathToFileURL(path.join(root, 'dist/src/template/index.js')).href);
const batch = JSON.parse(readFileSync(0, 'utf8'));
const t0 = performance.now();
let count = 0;
for (let r = 0; r < batch.rounds; r++) {
  for (const c of batch.conds) {
    templar.evalConditionSync(c, batch.vars);
    count++;
  }
  for (const t of batch.templates) {
    templar.renderSync(t, batch.vars);
    count++;
  }
}
process.stdout.write(`${JSON.stringify({ seconds: (performance.now() - t0) / 1000, count })}\n`);
