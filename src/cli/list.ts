/** `kplay run --syntax-check | --list-hosts | --list-tasks | --list-tags`: load, print ansible-playbook's listing, exit. */
import { EXIT, type ExitCode } from '../core/exit.js';
import { listOption, reportError } from './common.js';
import { loadAll } from '../run/inputs.js';
import { listPlaybook } from '../playbook/listing.js';
import type { RunFlags } from './run-flags.js';

/** The listing flags of `kplay run` (ansible-playbook's). */
export interface ListFlags {
  syntaxCheck?: boolean;
  listHosts?: boolean;
  listTasks?: boolean;
  listTags?: boolean;
}

/** Whether `kplay run` was asked for a listing (or a syntax check) instead of a run. */
export function wantsListing(flags: ListFlags): boolean {
  return flags.syntaxCheck === true || flags.listHosts === true || flags.listTasks === true || flags.listTags === true;
}

/** Load the playbook (every static check, no cluster contacted) and print what ansible-playbook prints. */
export async function listCommand(playbook: string, flags: RunFlags & ListFlags): Promise<ExitCode> {
  try {
    // the hosts need the inventory; a syntax check or a task listing only reads it when given (as validate)
    const loaded = await loadAll(playbook, flags, flags.listHosts === true);
    const text = listPlaybook(loaded.playbook, playbook, loaded.inventory, {
      listHosts: flags.listHosts === true,
      listTasks: flags.listTasks === true,
      listTags: flags.listTags === true,
      tags: listOption(flags.tags),
      skipTags: listOption(flags.skipTags),
      limit: flags.limit,
    });
    process.stdout.write(loaded.masker.mask(text));
    return EXIT.ok;
  } catch (e) {
    return reportError(e);
  }
}
