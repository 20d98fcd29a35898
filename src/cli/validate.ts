/** `kplay validate`: every static check, without contacting any cluster. */
import type { TaskNode } from '../playbook/types.js';
import { reportError } from './common.js';
import { loadAll, type LoadFlags } from '../run/inputs.js';
import { checkPatterns } from '../inventory/patterns.js';
import { EXIT, type ExitCode } from '../core/exit.js';

function countTasks(nodes: TaskNode[]): number {
  return nodes.reduce((n, t) => n + (t.kind === 'block' ? countTasks(t.block) + countTasks(t.rescue) + countTasks(t.always) : 1), 0);
}

/** Whether `nodes` hold an `add_host` or `group_by` task (the plays after it may target hosts and groups it makes). */
function changesInventory(nodes: TaskNode[]): boolean {
  return nodes.some((t) => (t.kind === 'block' ? changesInventory([...t.block, ...t.rescue, ...t.always]) : t.kind === 'task' && (t.module === 'add_host' || t.module === 'group_by')));
}

export async function validateCommand(playbook: string, flags: LoadFlags & { limit?: string }): Promise<ExitCode> {
  try {
    const loaded = await loadAll(playbook, flags, false);
    loaded.registry.compileAll({ builtins: false });
    const plays = loaded.playbook.plays;
    // a play after one that runs add_host or group_by may target what they make: checked when it runs
    const changer = plays.findIndex((p) => changesInventory([...p.preTasks, ...p.tasks, ...p.postTasks, ...p.handlers]));
    const checked = changer < 0 ? plays : plays.slice(0, changer + 1);
    if (loaded.inventory) checkPatterns(loaded.inventory, checked.map((p) => p.hosts), flags.limit);
    const tasks = plays.reduce((n, p) => n + countTasks(p.preTasks) + countTasks(p.tasks) + countTasks(p.postTasks) + p.handlers.length, 0);
    const inv = loaded.inventory;
    const explicit = inv ? [...inv.clusters.values()].filter((c) => !c.implicit).length : 0;
    const implicit = inv && explicit < inv.clusters.size ? ' + the implicit localhost' : '';
    process.stdout.write(`${playbook}: OK — ${plays.length} play(s), ${tasks} task(s)${inv ? `, inventory ${inv.source} (${explicit} clusters${implicit})` : ''}\n`);
    return EXIT.ok;
  } catch (e) {
    return reportError(e);
  }
}
