/**
 * The groups a host is in, as ansible-core's `Host.get_groups`: `all`, the groups that list it, and
 * every ancestor of those (breadth of the group tree, cycles ignored). Shared by the inventory
 * builder and the run's in-memory inventory (add_host, group_by).
 */
export function groupAncestry(direct: Iterable<string> | undefined, parentsOf: (group: string) => readonly string[] | undefined): Set<string> {
  const mine = new Set<string>(['all']);
  const stack = [...(direct ?? [])];
  while (stack.length) {
    const g = stack.pop() ?? '';
    if (mine.has(g)) continue;
    mine.add(g);
    stack.push(...(parentsOf(g) ?? []));
  }
  return mine;
}
