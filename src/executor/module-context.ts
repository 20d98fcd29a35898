/**
 * The {@link ModuleContext} a module runs with on one cluster: its variables, check/diff mode, a
 * logger that respects `no_log`, rendering (with secret sinks refused in manifest templates),
 * masking, the cluster's adapters, and `findFile` (a relative path looked up as Ansible does).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathDwimRelativeStack } from '../core/dwim.js';
import type { ModuleContext } from '../core/module.js';
import type { ModuleTask } from '../playbook/types.js';
import { templar } from '../template/index.js';
import { extendScope } from './lazyvars.js';
import { withLookups, type LookupHost } from './lookups.js';
import { ALLOW_VAR, hitsWarning, refuseHits, SecretSinkError, secretSinks } from './sinks.js';
import type { ClusterState } from './state.js';
import { taintRendered } from './taint.js';
import type { TaskHost, TaskKeywords } from './task-types.js';

type Obj = Record<string, unknown>;

/** The context a module runs with (also what reading the cluster for a `k8s` lookup uses). */
export function moduleContext(task: ModuleTask, cs: ClusterState, pr: TaskHost, vars: Obj, kw: TaskKeywords, signal: AbortSignal, host?: LookupHost): ModuleContext {
  const opts = pr.opts;
  const taskName = task.name ?? task.module;
  const lookups = <T>(render: () => Promise<T>): Promise<T> => (host ? withLookups(host, render) : render());
  const inventory = pr.inventoryFor?.(cs.name);
  return {
    cluster: { name: cs.name, context: cs.inv.context, kubeconfig: cs.inv.kubeconfig },
    vars,
    checkMode: kw.check,
    diffMode: kw.diff,
    environment: kw.environment,
    signal,
    baseDir: task.baseDir,
    findFile: (rel, kind) => findFile(rel, kind, vars, { baseDir: task.baseDir, roleDir: task.role?.dir }),
    // under no_log a module's own lines are hidden too (warnings say only that there was one)
    log: kw.hide
      ? {
          info: () => undefined,
          debug: () => undefined,
          warn: () => opts.emit({ type: 'log', level: 'warn', cluster: cs.name, task: taskName, msg: 'a warning (hidden by no_log)' }),
          progress: () => undefined,
        }
      : {
          info: (msg) => opts.emit({ type: 'log', level: 'info', cluster: cs.name, task: taskName, msg }),
          debug: (msg) => opts.emit({ type: 'log', level: 'debug', cluster: cs.name, task: taskName, msg }),
          warn: (msg) => opts.emit({ type: 'log', level: 'warn', cluster: cs.name, task: taskName, msg }),
          progress: (msg) => opts.emit({ type: 'progress', cluster: cs.name, task: taskName, msg }),
        },
    // what a module renders itself (assert's `that`, set_fact's values) may read the cluster with the k8s lookup too
    render: async (t, extra, options) => {
      const scope = extendScope(vars, extra);
      const out = await lookups(() => templar.renderString(t, scope, { where: task.pos, ...(host ? { host } : {}), ...(options?.delimiters ? { delimiters: options.delimiters } : {}) }));
      // a manifest template (`k8s`/`k8s_apply` `template:`): its fields are sinks as a definition's are
      const name = opts.registry.get(task.module)?.name;
      if (name === 'k8s' || name === 'k8s_apply') {
        const leaves = taintRendered(t, out, { vars: scope, masker: opts.masker, cluster: cs.name }).map((l) => ({ ...l, path: ['definition', ...l.path] }));
        const hits = secretSinks('k8s', { definition: out }, leaves);
        const refused = refuseHits(hits, () => vars[ALLOW_VAR], { task: taskName, cluster: cs.name }, (x) => opts.masker.mask(x));
        if (refused) throw new SecretSinkError(refused);
        const warning = hitsWarning(hits, (x) => opts.masker.mask(x));
        if (warning) opts.emit({ type: 'log', level: 'warn', cluster: cs.name, task: taskName, msg: warning });
      }
      return out;
    },
    evaluate: (expr, extra) => lookups(() => templar.render(`{{ ${expr} }}`, extendScope(vars, extra), { where: task.pos, ...(host ? { host } : {}) })),
    evalCondition: (cond, extra) => lookups(() => templar.evalCondition(cond, extendScope(vars, extra), { where: task.pos, ...(host ? { host } : {}) })),
    addSecret: (v, declared) => (declared ? opts.masker.addDeclared(v) : opts.masker.add(v)),
    mask: (t) => opts.masker.mask(t),
    adapter: (name, create) => cs.adapter(name, create),
    ...(pr.batchStarted ? { batchStarted: pr.batchStarted } : {}),
    ...(inventory ? { inventory } : {}),
  };
}

/**
 * See {@link ModuleContext.findFile}: `rel` as ansible-core's action plugins find a needle
 * (`path_dwim_relative_stack` over the task's search path, see src/core/dwim.ts); the last
 * candidate when none exists. A glob counts as found when the directory before its first wildcard exists.
 */
export function findFile(rel: string, kind: 'files' | 'templates' | 'vars', vars: Obj, task: { baseDir: string; roleDir?: string | undefined }): string {
  if (path.isAbsolute(rel)) return rel;
  const sp = vars.ansible_search_path;
  const paths = Array.isArray(sp) && sp.every((d): d is string => typeof d === 'string') ? sp : [...(task.roleDir ? [task.roleDir] : []), task.baseDir];
  const base = typeof vars.playbook_dir === 'string' ? vars.playbook_dir : task.baseDir;
  const exists = (p: string): boolean => {
    const wild = p.search(/[*?[{]/);
    return existsSync(wild < 0 ? p : path.dirname(p.slice(0, wild + 1)));
  };
  const tried: string[] = [];
  return pathDwimRelativeStack(paths, kind, rel, { base, exists, tried }) ?? (tried[tried.length - 1] as string);
}
