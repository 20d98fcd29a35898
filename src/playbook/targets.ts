/**
 * The clusters a play's `hosts:` selects in an inventory, as ansible-playbook resolves them: a
 * pattern that matches nothing skips the play (with a warning, and a suggestion for a misspelt name).
 * Used by the engine (src/executor/playbook-run.ts) and by the approval rule of plans (src/plan/).
 */
import type { Inventory } from '../inventory/types.js';
import { matchClusters } from '../inventory/patterns.js';
import { InputError } from '../load/errors.js';
import type { Play } from './types.js';

/** What matchClusters says when a pattern selects nothing (a play is then skipped, as in Ansible). */
const NO_MATCH = /matches no cluster|no cluster or group named/;

/**
 * The clusters a play's `hosts:` selects, or undefined when the pattern matches nothing (the play
 * is skipped with a warning, as ansible-playbook does). A malformed pattern is still an InputError,
 * and so is `localhost` when the inventory has no such cluster (Ansible's implicit localhost has no
 * counterpart: skipping would run nothing without saying so).
 */
export function playClusters(inv: Inventory, hosts: Play['hosts']): string[] | undefined {
  try {
    return matchClusters(inv, hosts);
  } catch (e) {
    // Ansible's implicit localhost has no counterpart here: skipping the play would silently do nothing
    const names = (Array.isArray(hosts) ? hosts : [hosts]).flatMap((h) => h.split(/[:,]/)).map((h) => h.trim());
    if (e instanceof InputError && NO_MATCH.test(e.message) && !names.some((h) => h === 'localhost' || h === '127.0.0.1')) return undefined;
    throw e;
  }
}

/** The suggestion matchClusters makes for a pattern that matches nothing (a misspelt name), if any. */
export function noMatchHint(inv: Inventory, hosts: Play['hosts']): string | undefined {
  try {
    matchClusters(inv, hosts);
  } catch (e) {
    if (e instanceof InputError && e.hint?.startsWith('did you mean')) return e.hint;
  }
  return undefined;
}
