/**
 * `kplay fleet job PLAYBOOK -i INV --shards N [...]`: write the Kubernetes objects that run a
 * window as N shards in a management cluster (an Indexed Job, the bundle ConfigMap, RBAC for the
 * coordination objects) as multi-document YAML to stdout or `-o FILE`.
 */
import { collect, opt } from './options.js';
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { InputError } from '../load/errors.js';
import { DEFAULT_IMAGE, fleetJobObjects, toYaml, type FleetJobOptions } from '../fleet/job.js';
import { reportError } from './common.js';
import { loadAll } from '../run/inputs.js';
import { EXIT, type ExitCode } from '../core/exit.js';

/** Flags of `kplay fleet job` as commander gives them. */
export interface FleetJobFlags extends Omit<FleetJobOptions, 'playbook' | 'shards' | 'parallelism' | 'retries' | 'deadlineSeconds' | 'runId' | 'kubeconfigSecrets' | 'envSecrets'> {
  kubeconfigSecret?: string[];
  envSecret?: string[];
  shards?: string;
  parallelism?: string;
  retries?: string;
  deadline?: string;
  fleetRun?: string;
  out?: string;
}

function int(v: string | undefined, flag: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v.trim())) throw new InputError(`${flag} must be a whole number, got '${v}'`);
  return Number(v);
}

/** Generate and write; returns the exit code. */
export async function fleetJobCommand(playbook: string, flags: FleetJobFlags): Promise<ExitCode> {
  try {
    const shards = int(flags.shards, '--shards');
    if (shards === undefined) throw new InputError('--shards is required', undefined, 'kplay fleet job PLAYBOOK -i INV --shards N');
    const { out, fleetRun, deadline, parallelism, retries, kubeconfigSecret, envSecret, ...rest } = flags;
    const objects = await fleetJobObjects({
      ...rest,
      kubeconfigSecrets: kubeconfigSecret,
      envSecrets: envSecret,
      playbook,
      shards,
      parallelism: int(parallelism, '--parallelism'),
      retries: int(retries, '--retries'),
      deadlineSeconds: int(deadline, '--deadline'),
      runId: fleetRun,
    }, loadAll);
    const text = toYaml(objects);
    if (out && out !== '-') {
      await writeFile(out, text);
      process.stderr.write(`wrote ${objects.length} objects to ${out}: kubectl apply --server-side -f ${out}\n`);
    } else process.stdout.write(text);
    return EXIT.ok;
  } catch (e) {
    return reportError(e);
  }
}


/** Add `job` to the `kplay fleet` command group. */
export function addFleetJobCommand(fleet: Command): void {
  fleet
    .command('job')
    .description('write the Kubernetes objects (Indexed Job, bundle ConfigMap, ServiceAccount and RBAC) that run the window as N shards in a management cluster')
    .argument('<playbook>', 'playbook file (its directory is bundled)')
    .addOption(opt('inventory', 'inventory file, directory, or name under inventories/ (bundled)'))
    .option('--shards <n>', 'number of shards (the Job\'s completions)')
    .option('--parallelism <n>', 'shards running at once (default: all)')
    .option('--fleet-run <id>', 'fleet run id tying the shards together (default: fleet-<UTC time>)')
    .option('--image <image>', `kplay image (default ${DEFAULT_IMAGE}: build it from docs/Dockerfile)`)
    .option('--namespace <ns>', 'namespace of the Job and its objects', 'default')
    .option('--kubeconfig-secret <name[/key]>', 'Secret holding the target clusters\' kubeconfig (key default kubeconfig), mounted by reference; the first sets KUBECONFIG (repeatable)', collect)
    .option('--env-secret <name>', 'Secret whose keys become env vars of the shards, for lookup(\'env\', …) (repeatable)', collect)
    .option('--records-pvc <claim>', 'PersistentVolumeClaim for the shards\' run records and journals (one directory per shard): a rerun pod resumes from it')
    .option('--retries <n>', 'reruns of a shard that crashed or was interrupted, each resuming from its journal (needs --records-pvc)', '0')
    .option('--deadline <seconds>', 'activeDeadlineSeconds of the Job: the window\'s hard end')
    .option('-o, --out <file>', 'write the YAML here (default: stdout)')
    .addOption(opt('extraVars', '(passed to every shard) extra variables; @file is bundled'))
    .addOption(opt('limit', '(passed to every shard) further limit the clusters'))
    .option('-C, --check', '(passed to every shard) change nothing')
    .option('-D, --diff', '(passed to every shard) show diffs')
    .addOption(opt('tags', '(passed to every shard) only tasks with these tags'))
    .addOption(opt('skipTags', '(passed to every shard) skip tasks with these tags'))
    .option('--start-at-task <name>', '(passed to every shard) start at this task')
    .option('-f, --forks <n>', '(passed to every shard) clusters worked on in parallel per shard')
    .addOption(opt('modulePath', '(passed to every shard) module directory inside the playbook directory'))
    .addOption(opt('verbose', '(passed to every shard) more output'))
    .addOption(opt('noLock', '(passed to every shard) do not take the per-cluster lock'))
    .option('--lock-timeout <seconds>', '(passed to every shard) wait this long for a cluster lock')
    .action(async (playbook: string, flags: FleetJobFlags) => {
      process.exitCode = await fleetJobCommand(playbook, flags);
    });
}
