#!/usr/bin/env node
// CLI for the kplay test sandbox: `npm run sandbox -- up --clusters 3 | down | status`.
import { parseArgs } from 'node:util';
import { up, down, status, memoryReport, statePath, OUTDATED } from './lib.mjs';

const USAGE = `usage: npm run sandbox -- <command> [options]

commands:
  up [--clusters N]   start N local clusters (default 3); reuses a healthy sandbox
  status              print each cluster's health; exits 1 when not running
  down                stop the sandbox's own processes and remove its state

env: KPLAY_SANDBOX_CACHE (binaries, default ~/.cache/kplay-sandbox),
     KPLAY_SANDBOX_DIR (state and logs, default ~/.cache/kplay-sandbox/run)`;

// a closed pipe (e.g. `| head`) must not kill `up` half-way
process.stdout.on('error', () => {});
process.stderr.on('error', () => {});

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { clusters: { type: 'string', short: 'n', default: '3' }, help: { type: 'boolean', short: 'h' } },
  });
  const cmd = positionals[0];
  if (values.help || !cmd) {
    console.log(USAGE);
    return cmd || values.help ? 0 : 2;
  }
  switch (cmd) {
    case 'up': {
      const res = await up({ clusters: Number(values.clusters) });
      if (res.reused) {
        for (const line of memoryReport(res.state).lines) console.log(`  ${line}`);
        console.log(`kubeconfig: ${res.kubeconfig}`);
        console.log(`inventory:  ${res.inventory}`);
        console.log(`state:      ${res.statePath}`);
      }
      return 0;
    }
    case 'down':
      await down();
      return 0;
    case 'status': {
      const st = await status();
      if (!st.state) {
        console.log(`sandbox: not running (${st.reason})`);
        return 1;
      }
      console.log(`sandbox: ${st.running ? 'running' : 'NOT healthy'} — ${st.reason}`);
      if (st.outdated) console.log(OUTDATED);
      console.log(`  etcd ${st.etcd.endpoint}: ${st.etcd.alive ? `alive, RSS ${st.etcd.rssMiB} MiB` : 'DEAD'}`);
      for (const c of st.clusters) {
        const dead = c.deadProcesses.length ? `, dead: ${c.deadProcesses.join(', ')}` : '';
        console.log(`  ${c.name} ${c.server}: ${c.healthy ? 'healthy' : 'UNHEALTHY'} (readyz ${c.readyz}${dead}), RSS ${c.rssMiB} MiB`);
      }
      console.log(`kubeconfig: ${st.state.kubeconfig}`);
      console.log(`inventory:  ${st.state.inventory}`);
      console.log(`state:      ${statePath()}`);
      return st.running ? 0 : 1;
    }
    default:
      console.error(`unknown command: ${cmd}\n${USAGE}`);
      return 2;
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`sandbox: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
