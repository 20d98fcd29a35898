#!/usr/bin/env node
/** The `kplay` command line: thin commands (flags → engine → exit code). */
import { opt } from './options.js';
import { Command, CommanderError, Option } from 'commander';
import { driftCommand, type DriftFlags } from './drift.js';
import { EXIT } from '../core/exit.js';
import { ansibleCfgWarning, checkSettings, setting } from '../core/settings.js';
import { historyCommand } from './history.js';
import { registerFleetStatus } from './fleet.js';
import { inventoryCommand } from './inventory.js';
import { modulesCommand } from './modules.js';
import { configCommand } from './config.js';
import { reportCommand } from './report.js';
import { guardPipes } from './pipes.js';
import { DEFAULT_MAX_INPUT_BYTES, setMaxInputBytes } from '../load/yaml.js';
import { reportError } from './common.js';
import { runCommand } from './run-command.js';
import { approveGate, approvePlan, planCommand, showCommand } from './plan.js';
import { schemasCommand } from './schemas.js';
import { validateCommand } from './validate.js';
import { addFleetJobCommand } from './fleet-job.js';
import { setupVault, withVaultOptions } from './vault.js';

guardPipes();


const program = new Command();
program
  .name('kplay')
  .description('Ansible-like playbooks for Kubernetes: ordered, idempotent maintenance windows across many clusters.')
  .version('0.1.0')
  .showHelpAfterError('(run with --help for usage)')
  .exitOverride()
  .hook('preAction', async (_program, action) => {
    // Every environment setting is parsed once, up front: a bad value is exit 1 before anything ran.
    try {
      checkSettings();
    } catch (e) {
      throw new CommanderError(reportError(e), 'kplay.settings', e instanceof Error ? e.message : String(e));
    }
    const cfgWarning = ansibleCfgWarning();
    if (cfgWarning) process.stderr.write(`[WARNING]: ${cfgWarning}\n`);
    // The input size cap: --max-input-bytes, else KPLAY_MAX_INPUT_BYTES, else 8 MiB.
    const flag: unknown = action.opts().maxInputBytes;
    setMaxInputBytes(typeof flag === 'string' && flag !== String(DEFAULT_MAX_INPUT_BYTES) ? Number(flag) : setting('maxInputBytes'));
    // The vault passwords (--vault-id, --vault-password-file, --ask-vault-pass, ANSIBLE_VAULT_*), before anything is read.
    try {
      await setupVault(action);
    } catch (e) {
      throw new CommanderError(reportError(e), 'kplay.vault', e instanceof Error ? e.message : String(e));
    }
  });

withVaultOptions(program
  .command('run'))
  .description('run a playbook against the clusters of an inventory (or carry out a plan: --plan plan.json)')
  .argument('[playbook]', 'playbook file (with --plan: taken from the plan when omitted)')
  .addOption(opt('inventory'))
  .addOption(opt('extraVars'))
  .addOption(opt('maxInputBytes'))
  .option('-C, --check', 'change nothing; report what would change')
  .option('-D, --diff', 'show unified diffs of what changes (or would change)')
  .addOption(opt('limit'))
  .addOption(opt('tags'))
  .addOption(opt('skipTags'))
  .option('--start-at-task <name>', 'start at the first task with this name (glob)')
  .addOption(opt('forks'))
  .addOption(new Option('-o, --output <format>', "output format (ansible: ansible-core's default output, also chosen by ANSIBLE_STDOUT_CALLBACK=default or stdout_callback = default in ansible.cfg; default text)").choices(['text', 'json', 'ansible']))
  .addOption(new Option('--progress <mode>', 'board: a live board of every cluster redrawn in place (default on a terminal with text output); plain: the scrolling log').choices(['plain', 'board']))
  .addOption(opt('modulePath'))
  .addOption(opt('verbose'))
  .addOption(opt('noColor'))
  .addOption(opt('noLock'))
  .addOption(opt('lockTimeout'))
  .addOption(opt('recordDir'))
  .addOption(opt('keepRecords'))
  .option('--plan <file>', 'carry out this plan only; refused (exit 5) when the inputs or the live state moved since it was made')
  .option('--replan', 'with --plan: run the playbook as it is now even when the plan no longer holds (not where an approved plan is required)')
  .option('--resume <run_id>', 'carry on an interrupted run (`last`: the newest): clusters that finished a play are left out of it, the others run it again')
  .option('--shard <I/N>', 'run shard I (0-based) of N: the clusters a stable hash of their name gives it (also KPLAY_SHARD=I/N, or JOB_COMPLETION_INDEX with --shards)')
  .option('--shards <n>', 'the number of shards, with the index from JOB_COMPLETION_INDEX (an Indexed Job pod); also KPLAY_SHARDS')
  .option('--fleet-run <id>', 'the fleet run all shards share: one failure budget and stop flag in the management cluster (also KPLAY_FLEET_RUN)')
  .option('--fleet-namespace <ns>', 'namespace of the fleet run\'s ConfigMap (also KPLAY_FLEET_NAMESPACE; default: the pod\'s namespace, else kplay-system)')
  .option('--fleet-context <context>', 'kubeconfig context of the management cluster (also KPLAY_FLEET_CONTEXT; default: current context, or in-cluster)')
  .option('--fleet-kubeconfig <file>', 'kubeconfig of the management cluster (also KPLAY_FLEET_KUBECONFIG)')
  .option('--syntax-check', "load the playbook (every static check), print ansible-playbook's 'playbook: FILE' and exit; nothing runs")
  .option('--list-hosts', 'print each play\'s pattern and the clusters it selects (with --limit), as ansible-playbook; nothing runs')
  .option('--list-tasks', 'print the tasks that would run (with --tags/--skip-tags) and their tags, as ansible-playbook; nothing runs')
  .option('--list-tags', 'print every tag of each play\'s tasks, as ansible-playbook; nothing runs')
  .option('--flush-cache', "accepted for ansible-playbook's scripts: kplay keeps no fact cache between runs, so there is nothing to flush")
  .action(async (playbook: string | undefined, flags) => {
    process.exitCode = await runCommand(playbook, flags);
  });

withVaultOptions(program
  .command('plan'))
  .description('run the playbook in check mode everywhere and write what would change as a plan (review, approve, then kplay run --plan)')
  .argument('<playbook>', 'playbook file')
  .requiredOption('-o, --out <file>', 'where to write the plan (JSON)')
  .addOption(opt('inventory'))
  .addOption(opt('extraVars', 'extra variables (repeatable)'))
  .addOption(opt('maxInputBytes'))
  .addOption(opt('limit', 'further limit the clusters'))
  .addOption(opt('tags', 'only tasks with these tags'))
  .addOption(opt('skipTags'))
  .addOption(opt('forks', 'clusters checked in parallel'))
  .addOption(opt('modulePath'))
  .addOption(opt('verbose', 'more output'))
  .option('--no-diff', 'print summaries only (the plan file always holds the diffs)')
  .addOption(opt('noColor', 'no colours'))
  .action(async (playbook: string, flags) => {
    process.exitCode = await planCommand(playbook, { ...flags, output: 'text' });
  });

program
  .command('show')
  .description('print a plan: per cluster and task what would change, with diffs, its inputs and approvals')
  .argument('<plan>', 'plan file')
  .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
  .option('--no-diff', 'summaries only')
  .action(async (file: string, flags) => {
    process.exitCode = await showCommand(file, flags);
  });

program
  .command('approve')
  .description('approve a plan (bound to its digest): kplay approve plan.json; or a gate a run waits at: kplay approve RUN_ID --gate NAME -i INV')
  .argument('<plan_or_run_id>', 'plan file, or (with --gate) the id of the waiting run')
  .option('--gate <name>', 'approve the gate of this name that run RUN_ID is waiting at')
  .addOption(opt('inventory', '(with --gate) inventory whose clusters hold the gate'))
  .addOption(opt('limit', '(with --gate) only these clusters'))
  .option('--reject', '(with --gate) reject instead: the waiting task fails')
  .option('--as <name>', 'who approves (default: the kubeconfig user, else user@host)')
  .option('--comment <text>', 'a comment kept with the approval (a change ticket)')
  .action(async (target: string, flags) => {
    process.exitCode = flags.gate ? await approveGate(target, flags) : await approvePlan(target, flags);
  });

withVaultOptions(program
  .command('drift'))
  .description('check mode: show, per cluster, only what differs from the playbook (exit 0 none, 3 drift, 2 errors)')
  .argument('<playbook>', 'playbook file')
  .addOption(opt('inventory', 'inventory file, directory, or name'))
  .addOption(opt('extraVars', 'extra variables (repeatable)'))
  .addOption(opt('maxInputBytes'))
  .addOption(opt('limit', 'further limit the clusters'))
  .addOption(opt('tags', 'only check tasks with these tags'))
  .addOption(opt('skipTags', 'skip tasks with these tags (tasks tagged `transient` are always skipped unless in --tags)'))
  .addOption(opt('forks', 'clusters checked in parallel'))
  .addOption(new Option('-o, --output <format>', 'output format (junit: one test suite per cluster, for CI; html: a self-contained page on stdout)').choices(['text', 'json', 'junit', 'html']).default('text'))
  .addOption(opt('modulePath'))
  .addOption(opt('verbose', 'more output'))
  .option('--diff', 'show a diff per drifted object (the default)')
  .option('--no-diff', 'summaries only: the drifted objects and fields, without diffs')
  .addOption(opt('noColor'))
  .option('--explain', 'also list the drift that built-in and drift_ignore rules hid, with the rule')
  .option('--repair', 'then take the drift back: run the state-declaring tasks (k8s_apply, helm_release) for real on the drifted clusters, under the cluster lock, with a run record')
  .addOption(opt('noLock', '(with --repair) do not take the cluster lock'))
  .addOption(opt('lockTimeout', '(with --repair) how long to wait for another run\'s lock'))
  .addOption(opt('recordDir', '(with --repair) also write the run record to this directory'))
  .addOption(opt('keepRecords', '(with --repair) run records kept per cluster'))
  .action(async (playbook: string, flags) => {
    const { repair, ...rest } = flags as { repair?: boolean } & Record<string, unknown>;
    process.exitCode = await driftCommand(playbook, { ...(rest as unknown as DriftFlags), repairDrift: repair === true });
  });

program
  .command('history')
  .description('runs recorded in the clusters (`history -i INV`) or locally (`history`), one run (`history show RUN_ID`), or check that no record was edited, removed or reordered (`history verify`: exit 0 intact, 3 tampered)')
  .argument('[action]', '`show` to show one run, `verify` to check the hash chains')
  .argument('[run_id]', 'run id for `show`')
  .addOption(opt('inventory', 'inventory whose clusters hold the records'))
  .option('--cluster <pattern>', 'only these clusters')
  .addOption(opt('recordDir', 'local run records (default .kplay/runs, or KPLAY_RECORD_DIR)'))
  .option('--user <user>', 'only runs by this user')
  .option('--playbook <file>', 'only runs of this playbook')
  .option('--since <time>', 'only runs started since (ISO time, or 30m, 24h, 7d ago)')
  .option('--until <time>', 'only runs started before (ISO time, or 30m, 24h, 7d ago)')
  .addOption(new Option('--outcome <outcome>', 'only runs with this outcome').choices(['success', 'failed', 'interrupted', 'changed', 'unchanged']))
  .option('--fleet-run <id>', 'only the shards\' runs of this fleet run (`kplay run --shard I/N --fleet-run ID`), listed together')
  .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
  .action(async (action: string | undefined, runId: string | undefined, flags) => {
    process.exitCode = await historyCommand(action, runId, flags);
  });

program
  .command('report')
  .description('the run report: one self-contained HTML file (timeline, results per cluster, diffs, failures, recap) from the local run record, else the records in the clusters of -i (exit 0 written, 3 written but the run\'s record does not verify in its hash chains)')
  .argument('[run_id]', 'run id (a unique prefix will do), or `last`', 'last')
  .option('-o, --out <file>', 'the HTML file (`-`: stdout; default kplay-report-RUN_ID.html)')
  .addOption(opt('inventory', 'read the record from these clusters when there is no local one'))
  .option('--cluster <pattern>', '(with -i) only these clusters')
  .addOption(opt('recordDir', 'local run records (default .kplay/runs, or KPLAY_RECORD_DIR)'))
  .action(async (runId: string, flags) => {
    process.exitCode = await reportCommand(runId, flags);
  });

withVaultOptions(program
  .command('validate'))
  .description('check a playbook (and inventory) without contacting any cluster')
  .argument('<playbook>', 'playbook file')
  .addOption(opt('inventory', 'also check host patterns against this inventory'))
  .addOption(opt('extraVars', 'extra variables'))
  .addOption(opt('maxInputBytes'))
  .addOption(opt('limit', 'also check this limit pattern'))
  .addOption(opt('modulePath'))
  .action(async (playbook: string, flags) => {
    process.exitCode = await validateCommand(playbook, flags);
  });

registerFleetStatus(program.command('fleet').description('fleet windows run as shards (kplay run --shard I/N --fleet-run ID)'));

program
  .command('inventory')
  .description('show an inventory: resolved vars per cluster (--list, --cluster) or the group tree (--graph)')
  .addOption(opt('inventory', 'inventory file, directory, or name'))
  .option('--list', 'all groups and clusters with resolved vars, as JSON')
  .option('--graph', 'the group tree')
  .option('--cluster <name>', 'one cluster with its resolved vars, as YAML')
  .action(async (flags) => {
    process.exitCode = await inventoryCommand(flags);
  });

program
  .command('modules')
  .description('list modules, or show the documentation of one')
  .argument('[name]', 'module name')
  .addOption(opt('modulePath'))
  .action(async (name: string | undefined, flags) => {
    process.exitCode = await modulesCommand(name, flags);
  });

program
  .command('config')
  .description('show kplay\'s settings as ansible-config does: `config dump` lists each value and its origin (kplay\'s variable, ANSIBLE_*, the ansible.cfg read, or the default)')
  .command('dump')
  .description('every setting, its value and where it came from (as `ansible-config dump`)')
  .option('--only-changed, --changed-only', 'only the settings that are not at their default')
  .action((flags: { onlyChanged?: boolean }) => {
    process.exitCode = configCommand(flags);
  });

program
  .command('schemas')
  .description('(development) regenerate schemas/playbook.schema.json, docs/modules.md and the README module index')
  .option('--write', 'write the files (default)')
  .option('--check', 'exit 1 if they are out of date')
  .action(async (flags) => {
    process.exitCode = await schemasCommand(flags);
  });

// `kplay fleet …`: running a window as shards in a management cluster
addFleetJobCommand(program.commands.find((c) => c.name() === 'fleet') ?? program.command('fleet').description('run a window as shards in a management cluster'));

try {
  await program.parseAsync(process.argv);
} catch (e) {
  // commander's exitOverride: usage errors exit 1, help/version exit 0.
  const code = (e as { exitCode?: number; code?: string }).exitCode;
  const c = (e as { code?: string }).code;
  process.exitCode = c === 'commander.helpDisplayed' || c === 'commander.version' || c === 'commander.help' ? EXIT.ok : code && code !== 0 ? EXIT.usage : EXIT.ok;
}
