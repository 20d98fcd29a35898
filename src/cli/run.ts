/** `kplay run`: parse flags → load → run → exit code. */
import { matchClusters } from '../inventory/patterns.js';
import { runPlaybook, EXIT } from '../executor/run.js';
import type { Inventory } from '../inventory/types.js';
import { InputError } from '../load/errors.js';
import { interruptController, listOption, loadAll, makeReporter, newRunId, reportError, type LoadFlags } from './common.js';

/** Flags of `kplay run`. */
export interface RunFlags extends LoadFlags {
  check?: boolean;
  diff?: boolean;
  limit?: string;
  tags?: string[];
  skipTags?: string[];
  startAtTask?: string;
  forks: string;
  output: string;
  verbose: number;
  color?: boolean;
}

/** Check every play's host pattern and the limit before anything runs. */
export function checkPatterns(inv: Inventory, hosts: (string | string[])[], limit: string | undefined): void {
  for (const h of hosts) matchClusters(inv, h);
  if (limit) matchClusters(inv, limit);
}

export async function runCommand(playbook: string, flags: RunFlags): Promise<number> {
  let loaded;
  try {
    const forks = Number(flags.forks);
    if (!Number.isInteger(forks) || forks < 1) throw new InputError(`--forks must be a positive integer, got '${flags.forks}'`);
    loaded = await loadAll(playbook, flags, true);
    const inventory = loaded.inventory as Inventory;
    checkPatterns(inventory, loaded.playbook.plays.map((p) => p.hosts), flags.limit);
    const reporter = makeReporter(flags.output, { verbosity: flags.verbose, diff: flags.diff === true, color: flags.color === false ? false : undefined });
    const masker = loaded.masker;
    const intr = interruptController(() => undefined);
    try {
      const summary = await runPlaybook({
        playbook: loaded.playbook,
        inventory,
        registry: loaded.registry,
        extraVars: loaded.extraVars,
        check: flags.check === true,
        diff: flags.diff === true,
        limit: flags.limit,
        tags: listOption(flags.tags),
        skipTags: listOption(flags.skipTags),
        startAtTask: flags.startAtTask,
        forks,
        runId: newRunId(),
        masker,
        signal: intr.signal,
        emit: (e) => reporter.handle(masker.maskValue(e)),
      });
      reporter.close();
      return summary.exitCode;
    } finally {
      intr.dispose();
    }
  } catch (e) {
    return reportError(e, loaded?.masker) || EXIT.usage;
  }
}
