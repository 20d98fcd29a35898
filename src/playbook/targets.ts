/**
 * The clusters a play's `hosts:` selects in an inventory, as ansible-playbook resolves them: each
 * term that matches nothing is ignored (the caller warns, with a suggestion for a misspelt name) and
 * the rest of the pattern runs; a play whose pattern selects nothing is skipped ("no hosts matched").
 * Used by the engine (src/executor/playbook-run.ts) and by the approval rule of plans (src/plan/).
 */
import type { Inventory } from '../inventory/types.js';
import { selectClusters } from '../inventory/patterns.js';
import { InputError } from '../load/errors.js';
import { didYouMean } from '../load/suggest.js';
import type { Play } from './types.js';

/** A term of a play's pattern that matched no cluster or group. */
export interface UnmatchedTerm {
  /** The term without its operator, as Ansible names it in its warning. */
  text: string;
  /** "did you mean 'prod'?" when a known name is close. */
  hint?: string;
}

/** What a play's `hosts:` selects. */
export interface PlayTargets {
  /** The clusters, in the order ansible-core evaluates the pattern (empty: the play is skipped). */
  clusters: string[];
  /** The terms that matched nothing. */
  unmatched: UnmatchedTerm[];
}

/**
 * The clusters a play's `hosts:` selects and the terms that matched nothing. A malformed pattern
 * is still an InputError, and so is a pattern naming `localhost` when the inventory has no such
 * cluster and nothing else matched (Ansible's implicit localhost has no counterpart: skipping would
 * run nothing without saying so).
 */
export function playClusters(inv: Inventory, hosts: Play['hosts']): PlayTargets {
  const { clusters, unmatched } = selectClusters(inv, hosts);
  const names = [...inv.groups.keys(), ...[...inv.clusters.values()].filter((c) => !c.implicit).map((c) => c.name)];
  const local = unmatched.find((t) => t.text === 'localhost' || t.text === '127.0.0.1');
  if (local && clusters.length === 0) {
    throw new InputError(`host pattern '${Array.isArray(hosts) ? hosts.join(',') : hosts}': the inventory has no cluster named '${local.text}'`, undefined, "add 'localhost' to the inventory (or run with the implicit localhost: a playbook whose only play targets localhost)");
  }
  return {
    clusters,
    unmatched: unmatched.map((t) => {
      const hint = /[*?[~]/.test(t.text) ? undefined : didYouMean(t.text, names);
      return hint ? { text: t.text, hint } : { text: t.text };
    }),
  };
}
