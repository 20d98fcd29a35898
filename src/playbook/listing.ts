/**
 * ansible-playbook's listings of a loaded playbook, line for line as ansible-core's PlaybookCLI
 * prints them: `--list-hosts` (each play's pattern and the hosts it selects), `--list-tasks` (the
 * tasks that would run under `--tags`/`--skip-tags`, with their effective tags) and `--list-tags`
 * (every tag of the play's tasks), and `--syntax-check` (the playbook line alone). Nothing is
 * contacted. Where ansible-core prints a Python set (a play's tags, its hosts) the order is the
 * play's own here, which is stable.
 */
import type { Inventory } from '../inventory/types.js';
import { selectClusters } from '../inventory/patterns.js';
import { tagsSelected } from './tags.js';
import type { Play, Playbook, TaskNode } from './types.js';

/** Which listings to print (several may be asked at once, as with ansible-playbook). */
export interface ListingOptions {
  listHosts: boolean;
  listTasks: boolean;
  listTags: boolean;
  /** `--tags` (with `--list-tags` and neither `--tags` nor `--skip-tags`, ansible-core selects `never` tasks too, in both listings). */
  tags: string[];
  /** `--skip-tags`. */
  skipTags: string[];
  /** `--limit`, applied to the hosts listed. */
  limit?: string;
}

/** The playbook argument as given (ansible-core prints it as the user wrote it). */
function header(playbookArg: string): string[] {
  return ['', `playbook: ${playbookArg}`];
}

/** Python's `repr` of a list of strings, as ansible-core prints `pattern: ['web']`. */
function pyList(items: readonly string[]): string {
  return `[${items.map((s) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`).join(', ')}]`;
}

/** The tasks ansible-core's listing walks: pre_tasks, roles and tasks, post_tasks; a block's `block` part only. */
function walk(nodes: readonly TaskNode[], visit: (n: Exclude<TaskNode, { kind: 'block' }>) => void): void {
  for (const n of nodes) {
    if (n.kind === 'block') walk(n.block, visit);
    else visit(n);
  }
}

/** What ansible-core prints for a task: its name (`role : name` in a role), else its action. */
function taskLabel(n: Exclude<TaskNode, { kind: 'block' }>): string {
  if (n.name) return n.role && n.kind === 'task' ? `${n.role.name} : ${n.name}` : n.name;
  switch (n.kind) {
    case 'task':
      return n.module;
    case 'include':
      return 'include_tasks';
    case 'include_role':
      return 'include_role';
    case 'meta':
      return 'meta';
  }
}

const sorted = (xs: Iterable<string>): string[] => [...new Set(xs)].sort();

function playLines(play: Play, index: number, inv: Inventory | undefined, o: ListingOptions, limit: Set<string> | undefined): string[] {
  const patterns = Array.isArray(play.hosts) ? play.hosts : [play.hosts];
  const out: string[] = [];
  let line = `  play #${index + 1} (${patterns.join(',')}): ${play.name}\tTAGS: [${[...new Set(play.tags)].join(',')}]`;
  if (o.listHosts) {
    const hosts = inv ? selectClusters(inv, play.hosts).clusters.filter((c) => !limit || limit.has(c)) : [];
    line += `\n    pattern: ${pyList(patterns)}\n    hosts (${hosts.length}):${hosts.map((h) => `\n      ${h}`).join('')}`;
  }
  out.push('', line);
  if (!o.listTasks && !o.listTags) return out;
  // ansible-core: without --tags or --skip-tags, --list-tags lists every tag, `never` included
  const only = o.listTags && o.tags.length === 0 && o.skipTags.length === 0 ? ['never', 'all'] : o.tags;
  const task: string[] = [];
  const allTags = new Set<string>();
  walk([...play.preTasks, ...play.tasks, ...play.postTasks], (n) => {
    if (!tagsSelected(n.tags, only, o.skipTags)) return;
    for (const t of n.tags) allTags.add(t);
    if (o.listTasks) task.push(`      ${taskLabel(n)}\tTAGS: [${sorted([...play.tags, ...n.tags]).join(', ')}]`);
  });
  const msg: string[] = [];
  if (o.listTasks) msg.push('    tasks:', ...task);
  if (o.listTags) msg.push(`      TASK TAGS: [${sorted([...play.tags, ...allTags]).join(', ')}]`);
  out.push(...msg);
  return out;
}

/**
 * The text ansible-playbook prints for `--syntax-check`, `--list-hosts`, `--list-tasks` and
 * `--list-tags` (one or several) of `playbook`, given as `playbookArg` on the command line.
 */
export function listPlaybook(playbook: Playbook, playbookArg: string, inv: Inventory | undefined, o: ListingOptions): string {
  const lines = header(playbookArg);
  if (o.listHosts || o.listTasks || o.listTags) {
    const limit = o.limit && inv ? new Set(selectClusters(inv, o.limit).clusters) : undefined;
    playbook.plays.forEach((play, i) => lines.push(...playLines(play, i, inv, o, limit)));
  }
  return `${lines.join('\n')}\n`;
}
