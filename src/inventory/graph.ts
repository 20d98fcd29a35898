/** `ansible-inventory --graph`-like rendering of an inventory. */
import type { Inventory } from './types.js';

function line(text: string, depth: number): string {
  return depth === 0 ? text : `${'  |'.repeat(depth)}--${text}`;
}

/**
 * The inventory as a tree, like `ansible-inventory --graph`:
 *
 * ```text
 * @all:
 *   |--@ungrouped:
 *   |--@prod:
 *   |  |--@eu:
 *   |  |  |--prod-eu-1
 * ```
 *
 * Under each group: its child groups (`ungrouped` first under `all`, then file order), then its
 * direct clusters (file order). Clusters listed directly under `all` appear under `@ungrouped`
 * (or, if they are also in a child group, only there). A group under several parents is
 * shown under each. Ends without a trailing newline.
 */
export function graph(inv: Inventory): string {
  const out: string[] = [];
  const walk = (name: string, depth: number): void => {
    const g = inv.groups.get(name);
    if (!g) return;
    out.push(line(`@${name}:`, depth));
    for (const child of g.children) walk(child, depth + 1);
    if (name !== 'all') for (const c of g.clusters) out.push(line(c, depth + 1));
  };
  walk('all', 0);
  return out.join('\n');
}
