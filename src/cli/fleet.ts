/**
 * The `kplay fleet` command group. `kplay fleet status FLEET_RUN_ID`: the merged view of a fleet
 * run's shards (src/fleet/status.ts), read from its ConfigMap in the management cluster. Exit 0:
 * every shard finished and no cluster failed; 2: a cluster failed or the fleet stopped; 3: shards
 * still running or missing; 1: usage or no such fleet run. (`kplay fleet job` registers itself in
 * its own file.)
 */
import type { Command } from 'commander';
import { Option } from 'commander';
import { readFleet } from '../fleet/coordinator.js';
import { DEFAULT_FLEET_NAMESPACE, fleetObjectName, FLEET_RUN_ID_PATTERN } from '../fleet/contract.js';
import { setting } from '../core/settings.js';
import type { Env } from '../core/setting-spec.js';
import { fleetStatus, type FleetStatus } from '../fleet/status.js';
import { connect } from '../k8s/client.js';
import { InputError } from '../load/errors.js';
import { tableLines } from '../report/table.js';
import { reportError } from './common.js';
import { EXIT, type ExitCode } from '../core/exit.js';

/** Flags of `kplay fleet status`. */
export interface FleetStatusFlags {
  fleetNamespace?: string;
  fleetContext?: string;
  fleetKubeconfig?: string;
  output: string;
}

/** Register `kplay fleet status` on the `fleet` command group. */
export function registerFleetStatus(fleet: Command): Command {
  fleet
    .command('status')
    .description('merge the shards of a fleet run: state per shard, recap per cluster, failures per fleet batch, the stop reason')
    .argument('<fleet_run_id>', 'the --fleet-run id the shards shared')
    .option('--fleet-namespace <ns>', 'namespace of the fleet run (also KPLAY_FLEET_NAMESPACE; default kplay-system)')
    .option('--fleet-context <context>', 'kubeconfig context of the management cluster (also KPLAY_FLEET_CONTEXT)')
    .option('--fleet-kubeconfig <file>', 'kubeconfig of the management cluster (also KPLAY_FLEET_KUBECONFIG)')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .action(async (id: string, flags: FleetStatusFlags) => {
      process.exitCode = await fleetStatusCommand(id, flags);
    });
  return fleet;
}

/** `kplay fleet status`: prints the merged view; returns the exit code. */
export async function fleetStatusCommand(id: string, flags: FleetStatusFlags, env: Env = process.env): Promise<ExitCode> {
  try {
    if (!FLEET_RUN_ID_PATTERN.test(id)) throw new InputError(`fleet run id '${id}' is not valid`, undefined, 'give the --fleet-run id the shards were started with');
    const namespace = flags.fleetNamespace ?? setting('fleetNamespace', env) ?? DEFAULT_FLEET_NAMESPACE;
    const kubeconfig = flags.fleetKubeconfig ?? setting('fleetKubeconfig', env);
    const client = await connect({ name: 'fleet (management cluster)', context: flags.fleetContext ?? setting('fleetContext', env) ?? '', ...(kubeconfig ? { kubeconfig } : {}) });
    const data = await readFleet(client, { fleetRun: id, namespace });
    if (!data) throw new InputError(`no fleet run ${id}: ConfigMap ${namespace}/${fleetObjectName(id)} does not exist`, undefined, 'check --fleet-namespace and --fleet-context (the shards\' management cluster)');
    const status = fleetStatus(id, data);
    process.stdout.write(flags.output === 'json' ? `${JSON.stringify(status, null, 2)}\n` : statusText(status));
    if (!status.complete) return EXIT.drift;
    return status.stop || status.failed_total > 0 || Object.values(status.recap).some((r) => r.failed > 0 || r.unreachable > 0) ? EXIT.failed : EXIT.ok;
  } catch (e) {
    return reportError(e);
  }
}

/** The text view of a fleet run. */
export function statusText(s: FleetStatus): string {
  const out: string[] = [];
  const done = s.shard_states.filter((x) => x.state === 'finished' || x.state === 'failed' || x.state === 'stopped').length;
  out.push(`fleet run ${s.fleet_run}: ${s.shards} shard(s), ${done} finished${s.complete ? '' : ', NOT COMPLETE'}`);
  if (s.stop) out.push(`STOPPED: ${s.stop.reason} (shard ${s.stop.shard}, play ${s.stop.play + 1}, batch ${s.stop.batch})`);
  out.push('', 'SHARDS');
  out.push(...tableLines([['shard', 'state', 'clusters', 'run id', 'resumed from', 'finished', 'stop reason'], ...s.shard_states.map((x) => [String(x.shard), x.state, String(x.clusters), x.run_id ?? '-', x.resumed_from ?? '-', x.finished ?? '-', x.stop_reason ?? ''])]).map((l) => `  ${l}`));
  out.push('', 'FAILURES (budget used per fleet batch)');
  if (s.failures.length === 0) out.push('  none');
  for (const f of s.failures) out.push(`  play ${f.play + 1} batch ${f.batch}: ${f.clusters.length} failed: ${f.clusters.join(', ')}`);
  out.push('', 'RECAP');
  out.push(...tableLines(Object.entries(s.recap).map(([n, r]) => [n, `ok=${r.ok}`, `changed=${r.changed}`, `unreachable=${r.unreachable}`, `failed=${r.failed}`, `skipped=${r.skipped}`, `rescued=${r.rescued}`, `ignored=${r.ignored}`, `shard=${r.shard}`])).map((l) => `  ${l}`));
  return `${out.join('\n')}\n`;
}
