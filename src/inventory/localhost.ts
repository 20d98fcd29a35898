/**
 * Ansible's implicit localhost: a play (or `--limit`) naming `localhost` or `127.0.0.1` when the
 * inventory has no such host runs on an implicit host `localhost` (ansible-core's
 * InventoryData._create_implicit_localhost): in no group, so `all` does not match it; it sees the
 * `all` group's vars and has `ansible_connection: local` and `ansible_python_interpreter` (the controller's Python, src/core/python.ts) (and its `host_vars/localhost` files); it connects like an Ansible host
 * (src/inventory/connection.ts), i.e. through the current kubeconfig context by default. The
 * cluster is only contacted when a task needs it.
 */
import path from 'node:path';
import { controllerPython } from '../core/python.js';
import { LOCALHOST_NAMES, resolveConnection } from './connection.js';
import { parsePattern } from './patterns.js';
import type { Inventory } from './types.js';

/** The name the implicit localhost gets (ansible-core names it after the first pattern; `localhost` in practice). */
export const IMPLICIT_LOCALHOST = 'localhost';

/** True when one of `patterns` names `localhost` or `127.0.0.1` and the inventory has no such host (nor a `localhost`). */
export function needsImplicitLocalhost(inv: Inventory, patterns: readonly (string | readonly string[] | undefined)[]): boolean {
  if (inv.clusters.has(IMPLICIT_LOCALHOST)) return false;
  return patterns.some((p) => p !== undefined && parsePattern(p).some((t) => LOCALHOST_NAMES.includes(t.text) && !inv.clusters.has(t.text)));
}

/**
 * `inv` plus the implicit localhost when one of `patterns` (the plays' `hosts:` and `--limit`)
 * needs it; else `inv` itself. A new Inventory object: `inv` is not changed.
 */
export function withImplicitLocalhost(
  inv: Inventory,
  patterns: readonly (string | readonly string[] | undefined)[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv },
): Inventory {
  if (!needsImplicitLocalhost(inv, patterns)) return inv;
  const all = inv.groups.get('all');
  // ansible-core sets these as the host's inventory vars; host_vars/localhost files win over them
  const vars: Record<string, unknown> = { ansible_connection: 'local', ansible_python_interpreter: controllerPython(opts.env), ...inv.localhostVars };
  const seen = { ...all?.inlineVars, ...all?.fileVars, ...all?.playbookVars, ...vars };
  const { context, kubeconfig } = resolveConnection({ name: IMPLICIT_LOCALHOST, asCluster: false, vars: seen }, inv.dir, path.resolve(opts.cwd), opts.env ?? process.env);
  const clusters = new Map(inv.clusters);
  clusters.set(IMPLICIT_LOCALHOST, { name: IMPLICIT_LOCALHOST, context, kubeconfig, vars, groups: [], implicit: true });
  return { ...inv, clusters };
}
