/**
 * The contracts of the expression language's plug-ins: filters (`x | name(args)`), tests
 * (`x is name(args)`) and lookups (`lookup('name', terms…)`). Each table maps a name (short and,
 * where Ansible has one, fully qualified: `ansible.builtin.to_json`) to a function of plain
 * values from {@link ./values.ts}.
 */

import type { Delimiters } from '../core/delimiters.js';

/** What a filter, test or lookup may use from the run: nothing else reaches it. */
export interface PluginContext {
  /** Read a variable by name (undefined → an `Undef`); lazily rendered vars render on read. */
  readonly variable: (name: string) => unknown;
  /** Every variable name visible (for `lookup('vars')`, `varnames`). */
  readonly variableNames: () => string[];
  /** Render a template string with the current variables (plus `extra`), e.g. for `lookup('template')`. */
  readonly render: (template: string, extra?: Record<string, unknown>, delimiters?: Readonly<Delimiters>) => unknown;
  /** Directories searched for relative paths of `file`/`template` lookups, in order (role files, playbook dir). */
  readonly searchPaths: readonly string[];
  /** The task is in a role (`role_path` is set): ansible-core's lookups then search a role's `tasks/` subdirectories as a role's. */
  readonly inRole?: boolean;
  /** Roots outside which no file may be read (the playbook's directory tree). */
  readonly fileRoots: readonly string[];
  /** Environment variables as the task sees them. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Register a value that must be masked in every output (a lookup that reads a secret). */
  readonly addSecret: (value: string) => void;
  /** Cluster access for `lookup('kubernetes.core.k8s', …)`, when the task runs against a cluster. */
  readonly k8s?: K8sLookup;
}

/** Reads objects from the cluster a task runs on, for the `k8s` lookup (synchronously from a prefetched cache). */
export interface K8sLookup {
  /** Objects matching the query (apiVersion/kind/name/namespace/selectors), read ahead of the evaluation. */
  readonly find: (query: Record<string, unknown>) => unknown[];
}

/** Keyword arguments of a call (`name=value`, or Liquid's `name: value`). */
export type Kwargs = Readonly<Record<string, unknown>>;

/**
 * A filter: the value before `|`, the positional and keyword arguments. Throw an `ExprError`
 * (from ./values.ts) with a clear message on bad input.
 */
export interface FilterDef {
  /** The implementation. */
  readonly fn: (value: unknown, args: unknown[], kwargs: Kwargs, ctx: PluginContext) => unknown;
  /**
   * Whether the filter handles an undefined input itself (`default`, `mandatory`); otherwise the
   * engine fails on an undefined input before calling it, naming what is undefined.
   * @default false
   */
  readonly acceptsUndefined?: boolean;
}

/** A test: `x is name(args)` / `x is not name`. Returns a boolean. */
export interface TestDef {
  /** The implementation. */
  readonly fn: (value: unknown, args: unknown[], kwargs: Kwargs, ctx: PluginContext) => boolean;
  /** Whether the test handles an undefined input itself (`defined`, `undefined`). @default false */
  readonly acceptsUndefined?: boolean;
  /** Whether the test reads an undecryptable vault value (`vault_encrypted`) rather than failing on it. @default false */
  readonly acceptsVaultMarker?: boolean;
}

/** A lookup: `lookup('name', *terms, **kwargs)` returns a list (joined by `lookup`, as Ansible does). */
export interface LookupDef {
  /** The implementation: one list entry per result. */
  readonly fn: (terms: unknown[], kwargs: Kwargs, ctx: PluginContext) => unknown[];
}
