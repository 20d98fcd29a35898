/**
 * One module task on one cluster: `when` → `loop` → render args → validate → run (with
 * `until`/`retries`, `timeout`, check mode) → `changed_when`/`failed_when` → `register` →
 * `notify`. Reports one `task_result` event per cluster (plus one per loop item).
 */
import { setting } from '../core/settings.js';
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage, formatPos, InputError } from '../load/errors.js';
import { validateArgs } from '../load/schema.js';
import { argumentsMessage } from './arg-message.js';
import type { ModuleTask } from '../playbook/types.js';
import type { ResultStatus } from '../report/events.js';
import { UnreachableError, type AnyModule, type DiffEntry, type ModuleContext, type ModuleResult } from '../core/module.js';
import { templar, Templar } from '../template/index.js';
import { DELEGATE_HINT, delegateProblem, moduleDefaultsFor } from '../playbook/keywords.js';
import { ansibleBooleans } from '../playbook/booleans.js';
import { kcoreActionRefusal } from '../playbook/kcore-action-plugin.js';
import { variableNameProblem, withAliases } from '../playbook/aliases.js';
import { isRecord } from '../core/shape.js';
import { jobId, startAsyncJob } from './async-jobs.js';
import { extendScope } from './lazyvars.js';
import { lookupHost, withLookups } from './lookups.js';
import { moduleContext } from './module-context.js';
import { registeredValue, resultMismatch } from './register.js';
import { loopItems, loopItemsOr, loopVars, UNDEFINED_LOOP_SKIPPED } from './loops.js';
import { declaredSourcesUnder, taintRendered, type TaintedLeaf } from './taint.js';
import { ALLOW_VAR, hitsWarning, refuseHits, SecretSinkError, secretSinks } from './sinks.js';
import type { ClusterState } from './state.js';
import type { TaskHost, TaskKeywords, TaskOutcome } from './task-types.js';
import { taskKeywords } from './task-keywords.js';
import { keepingWrites } from './kept-writes.js';
import { resolveTemplatedAction } from './templated-action.js';

type Obj = Record<string, unknown>;
export type { TaskHost, TaskKeywords, TaskOutcome } from './task-types.js';

/** What ansible-core shows for a failed result under `no_log` (an ok result shows nothing). */
const HIDDEN = "the output has been hidden due to the fact that 'no_log: true' was specified for this result";

/** Run a module task on one cluster and report it. */
export async function runModuleTask(written: ModuleTask, cs: ClusterState, pr: TaskHost, taskName: string, extra?: Obj): Promise<TaskOutcome> {
  // a templated `action:` is resolved to its module after `when` (see templated-action.ts)
  let task = written;
  const started = Date.now();
  const opts = pr.opts;
  let vars = pr.scopeFor(cs, task, extra);
  const where = { where: task.pos };
  // `no_log` may be a template: until it is rendered, nothing of this task is shown
  let kw: TaskKeywords = { hide: task.noLog !== undefined && task.noLog !== false, check: opts.check, diff: opts.diff, environment: {} };
  const report = (status: ResultStatus, r: { msg?: string; data?: Obj; diff?: DiffEntry[]; item?: string; ignored?: boolean; loopSummary?: boolean; changed?: boolean; result?: Obj; falseCondition?: boolean }): void => {
    const hide = kw.hide;
    const shown = r.result && r.loopSummary ? Object.fromEntries(Object.entries(r.result).filter(([k]) => k !== 'results')) : r.result;
    opts.emit({
      type: 'task_result',
      task: taskName,
      module: task.module,
      cluster: cs.name,
      status,
      // as ansible-core: the item is `None`, an ok result shows no message, a failed one the censored text
      item: hide && r.item !== undefined ? 'None' : r.item,
      msg: hide ? (status === 'failed' || status === 'unreachable' ? HIDDEN : undefined) : r.msg,
      ignored: r.ignored || undefined,
      changed: (status === 'failed' || status === 'unreachable') && r.changed ? true : undefined,
      diff: hide ? undefined : r.diff,
      data: hide ? undefined : r.data,
      duration_ms: Date.now() - started,
      loop_summary: r.loopSummary || undefined,
      result: hide && shown ? { censored: HIDDEN, changed: shown.changed === true } : shown,
      notified: status === 'changed' && !r.item && task.notify.length ? task.notify : undefined,
      false_condition: r.falseCondition && task.when.length === 1 ? task.when[0] : undefined, // ansible-core's (not known here with several `when:`)
    });
  };
  const fail = (msg: string): TaskOutcome => finish({ status: 'failed', msg }, undefined, true);

  // The final bookkeeping shared by every path.
  const finish = (outcome: ModuleResult | { status: 'unreachable'; msg: string }, registered: Obj | undefined, doReport: boolean, loopSummary = false): TaskOutcome => {
    let result = outcome;
    let status: ResultStatus = result.status;
    let ignored = false;
    let reg: Obj = registered ?? registeredValue(result);
    if (status === 'unreachable') {
      // `ignore_unreachable` (as Ansible): counted ok and ignored, the cluster stays in the play.
      // `ignore_errors`: kubernetes.core knows no unreachable host — an apiserver it cannot reach
      // fails the task — so an ignored failure, registered as kubernetes.core registers it.
      try {
        if (task.ignoreUnreachable !== undefined && pr.truthy(task.ignoreUnreachable, vars)) ignored = true;
        else if (pr.truthy(task.ignoreErrors, vars)) {
          ignored = true;
          status = 'failed';
          reg = { changed: reg.changed === true, failed: true, msg: result.msg };
        }
      } catch (e) {
        result = { status: 'unreachable', msg: `${result.msg ?? ''} (and ignore_unreachable/ignore_errors could not be evaluated: ${errorMessage(e)})` };
      }
    } else if (status === 'failed') {
      try {
        ignored = pr.truthy(task.ignoreErrors, vars);
      } catch (e) {
        result = { status: 'failed', msg: `${result.msg ?? ''} (and ignore_errors could not be evaluated: ${errorMessage(e)})` };
      }
    }
    if (task.register) {
      cs.facts[task.register] = reg;
      // a no_log task's result is a secret as a whole, as is one whose secret-derived arguments went where the task allowed them
      const secretReg = kw.hide ? [`the no_log task '${taskName}'`] : regSecrets.size ? [...regSecrets] : undefined;
      opts.masker.provenance.setVar(cs.name, task.register, secretReg, regSecrets.size > 0);
    }
    // a failed or unreachable result that wrote something before it ended changed the cluster all the same
    const changedAnyway = (status === 'failed' || status === 'unreachable') && reg.changed === true;
    if (doReport) report(status, { msg: result.msg, data: 'data' in result ? result.data : undefined, diff: 'diff' in result ? result.diff : undefined, ignored, loopSummary, changed: changedAnyway, result: reg, falseCondition: skippedByWhen });
    if (status === 'unreachable' && ignored) {
      cs.count('ignored');
      cs.count('ok');
    } else if (status === 'unreachable') {
      cs.unreachable = true;
      cs.unreachableReason = result.msg;
      cs.count('unreachable');
    } else if (status === 'failed') {
      // As ansible-playbook counts: an ignored failure is also ok (and changed when it changed something).
      if (ignored) {
        cs.count('ignored');
        cs.count('ok');
        if (reg.changed === true) cs.count('changed');
      } else {
        cs.failed = true;
        cs.count('failed');
        pr.lastFailure.set(cs.name, { task: taskName, name: ownName ?? '', action: task.module, result: reg });
      }
    } else if (status === 'changed') {
      // ansible-playbook counts a changed result in ok= too.
      cs.count('changed');
      cs.count('ok');
    } else if (status === 'skipped') cs.count('skipped');
    else cs.count('ok');
    if (status === 'changed') for (const n of task.notify) cs.notified.add(n);
    // the run record goes into the cluster also when the task failed after writing
    if ((status === 'changed' || changedAnyway) && pr.opts.registry.get(task.module)?.usesCluster && !kw.check) cs.clusterChanged = true;
    if (ignored && status !== 'unreachable') status = 'failed';
    return { status, ignored, registered: reg };
  };

  // the task's own name (rendered), for `ansible_failed_task.name`: empty when it has none, as in Ansible
  let ownName: string | undefined;
  /** kplay's own secrets (`!secret`) the task's arguments sent where it allowed them (`kplay_allow_secret_in`): its registered result derives from them. */
  const regSecrets = new Set<string>();
  let skippedByWhen = false; // the task (not one item) was skipped by its `when:`
  try {
    kw = await taskKeywords(task, pr, vars);
    if (task.delegateTo !== undefined) {
      const problem = delegateProblem(await templar.renderString(task.delegateTo, vars, where), cs.name);
      if (problem) return fail(`${problem} (${DELEGATE_HINT})`);
    }
    if (task.name) ownName = await templar.renderString(task.name, vars, where).catch(() => task.name);
    // Like Ansible, a looped task's `when` is evaluated per item (it may use `item`).
    // a condition may read the cluster (`when: query('kubernetes.core.k8s', …) | length > 0`)
    const whenHost = task.when.length > 0 ? await lookupHost(task.when, vars, moduleContext(task, cs, pr, vars, kw, opts.signal)) : undefined;
    const skipWhen = (): ReturnType<typeof finish> => {
      skippedByWhen = true;
      return finish({ status: 'skipped', msg: 'Conditional result was False' }, { changed: false, skipped: true, skip_reason: 'Conditional result was False' }, true);
    };
    if (task.loop === undefined && !(await pr.whenHolds(task.when, vars, task, whenHost))) return skipWhen();
    if (task.templatedAction) {
      const resolved = await resolveTemplatedAction(task, vars, opts.registry);
      if (typeof resolved === 'string') return fail(resolved);
      task = resolved;
    }
    if (task.deferredError !== undefined) return fail(task.deferredError);
    const mod = opts.registry.get(task.module) as AnyModule;
    if (task.loop === undefined) {
      const r = task.async !== undefined ? await runAsync(task, mod, cs, pr, vars, kw, regSecrets) : await runOnce(task, mod, cs, pr, vars, kw, regSecrets);
      return finish(r, undefined, true);
    }
    // Loops: one result per item, then a summary.
    const loopHost = await lookupHost([task.loop], vars, moduleContext(task, cs, pr, vars, kw, opts.signal));
    const list = await loopItemsOr(() => withLookups(loopHost, () => loopItems(task, vars, { ...where, host: loopHost })), () => pr.whenHolds(task.when, vars, task, whenHost));
    if (list === UNDEFINED_LOOP_SKIPPED) return skipWhen();
    if (!Array.isArray(list)) return fail(`loop must be a list, got ${typeof list === 'object' ? 'a map' : typeof list}: ${JSON.stringify(list)?.slice(0, 80)}`);
    // as ansible-core: no items is one skipped result (`skipping: [c]`), registered with its reason
    if (list.length === 0) return finish({ status: 'skipped', msg: 'No items in the list' }, { changed: false, results: [], skipped: true, skipped_reason: 'No items in the list' }, true);
    // items computed from a declared secret (`loop: "{{ passwords | map('upper') }}"`) are declared too
    const loopOwn = { value: false };
    const loopFrom = declaredSourcesUnder(task.loop, { vars, masker: opts.masker, cluster: cs.name }, loopOwn);
    if (loopFrom.length) for (const item of list) if (typeof item === 'string' || typeof item === 'number') opts.masker.addDeclared(item, loopFrom, loopOwn.value || undefined);
    const results: Obj[] = [];
    let anyChanged = false;
    let anyFailed = false;
    let anyOk = false;
    const lc = task.loopControl;
    for (const [i, item] of list.entries()) {
      if (opts.signal.aborted) break;
      if (i > 0 && lc.pause) await sleep(lc.pause * 1000, undefined, { signal: opts.signal }).catch(() => undefined);
      const itemVars: Obj = { ...loopVars(lc, list, i), loop_index: i };
      // Each item sees the facts the previous items set (set_fact in a loop accumulates, as in Ansible).
      if (i > 0) vars = pr.scopeFor(cs, task, extra);
      const scope = extendScope(vars, itemVars);
      const label = lc.label ? await templar.renderString(lc.label, scope, where) : labelOf(item);
      let r: ModuleResult;
      const itemSkipped = !(await pr.whenHolds(task.when, scope, task, whenHost));
      if (itemSkipped) r = { status: 'skipped', msg: 'Conditional result was False' };
      else r = task.async !== undefined ? await runAsync(task, mod, cs, pr, scope, kw, regSecrets) : await runOnce(task, mod, cs, pr, scope, kw, regSecrets);
      // as Ansible's per-item result: the loop variable, and index_var's value under its name
      const reg = { ...registeredValue(r), [lc.loopVar]: item, ansible_loop_var: lc.loopVar, ...(lc.indexVar ? { [lc.indexVar]: i, ansible_index_var: lc.indexVar } : {}), item_label: label };
      results.push(reg);
      const failedItem = r.status === 'failed';
      if (failedItem) anyFailed = true;
      const itemChanged = r.status === 'changed' || (r.status === 'failed' && r.changed === true);
      if (itemChanged) anyChanged = true;
      if (r.status === 'ok') anyOk = true;
      report(r.status, { msg: r.msg, data: 'data' in r ? r.data : undefined, diff: 'diff' in r ? r.diff : undefined, item: label, changed: itemChanged, result: reg, falseCondition: itemSkipped });
      // Like Ansible, a failed item does not stop the other items; `break_when` (with the item's result registered) does
      if (lc.breakWhen && (await pr.conditionsHold(lc.breakWhen, task.register ? extendScope(scope, { [task.register]: reg }) : scope, task))) break;
    }
    vars = pr.scopeFor(cs, task, extra);
    const status: ModuleResult['status'] = anyFailed ? 'failed' : anyChanged ? 'changed' : anyOk ? 'ok' : 'skipped';
    const msg = anyFailed ? 'One or more items failed' : status === 'skipped' ? 'All items skipped' : 'All items completed';
    const summary: ModuleResult = { status, msg };
    const reg: Obj = { results, changed: anyChanged, failed: anyFailed, skipped: status === 'skipped', msg };
    return finish(summary, reg, true, true);
  } catch (e) {
    if (e instanceof UnreachableError) return finish({ status: 'unreachable', msg: e.message }, { changed: e.written !== undefined && e.written.length > 0, unreachable: true, msg: e.message, ...(e.written ? { written: e.written } : {}) }, true);
    return fail(errorMessage(e));
  }
}

/**
 * Run the module once (one item), with until/retries, and apply changed_when/failed_when. As
 * ansible-core 2.19: `retries` counts the attempts after the first (3 when `until` is given and
 * `retries` is not); without `until` a failed result is retried; `retries: 0` runs once and does
 * not look at `until`. On giving up, `attempts` is the number of retries (ansible-core's count).
 */
async function runOnce(task: ModuleTask, mod: AnyModule, cs: ClusterState, pr: TaskHost, vars: Obj, kw: TaskKeywords, regSecrets: Set<string>, bound?: AbortSignal): Promise<ModuleResult> {
  const opts = pr.opts;
  const retries = task.retries !== undefined ? await pr.intOf(task.retries, vars) : task.until !== undefined ? 3 : 0;
  const total = 1 + retries;
  const delayRaw = task.delay !== undefined ? Number(typeof task.delay === 'string' ? await templar.render(task.delay, vars, { where: task.pos }) : task.delay) : 5;
  const delay = Number.isFinite(delayRaw) && delayRaw >= 0 ? delayRaw : 1;
  let last: ModuleResult | undefined;
  for (let attempt = 1; attempt <= total; attempt++) {
    let r = await invoke(task, mod, cs, pr, vars, kw, regSecrets, bound);
    if (bound?.aborted) return r;
    if (r.status === 'skipped') return r;
    // The result as conditions see it: under the register name and as `result` (with `attempts` when retrying).
    const withAttempts = (x: ModuleResult): ModuleResult => (total > 1 && x.status !== 'skipped' ? ({ ...x, data: { ...(x.data ?? {}), attempts: attempt } } as ModuleResult) : x);
    r = withAttempts(r);
    const reg = registeredValue(r);
    const condVars = extendScope(vars, { result: reg, ...(task.register ? { [task.register]: reg } : {}) });
    if (task.changedWhen !== undefined && r.status !== 'failed') {
      const changed = await pr.conditionsHold(task.changedWhen, condVars, task);
      r = { ...r, status: changed ? 'changed' : 'ok' };
    }
    if (task.failedWhen !== undefined) {
      const failed = await pr.conditionsHold(task.failedWhen, condVars, task);
      const diff = 'diff' in r ? r.diff : undefined;
      if (failed && r.status !== 'failed') r = { status: 'failed', msg: r.msg ?? 'failed_when condition is true', data: r.data, diff };
      else if (!failed && r.status === 'failed') r = { status: 'ok', msg: r.msg, data: r.data, diff };
    }
    if (total === 1) return r;
    const reg2 = registeredValue(r);
    const untilVars = extendScope(vars, { result: reg2, ...(task.register ? { [task.register]: reg2 } : {}) });
    const done = task.until !== undefined ? await pr.conditionsHold(task.until, untilVars, task) : r.status !== 'failed';
    if (done) return r;
    last = r;
    if (attempt >= total || opts.signal.aborted) break;
    opts.emit({ type: 'retry', task: task.name ?? task.module, cluster: cs.name, attempt, retries: total - attempt, msg: kw.hide ? undefined : r.msg });
    try {
      await sleep(delay * 1000, undefined, { signal: opts.signal });
    } catch {
      return { status: 'failed', msg: 'interrupted while waiting to retry' };
    }
  }
  const r = last as ModuleResult;
  const attempts = r.data && typeof r.data.attempts === 'number' ? r.data.attempts : total;
  // the last attempt's own change is kept (a command that ran changed something), as in Ansible
  const changed = r.status === 'changed' || (r.status === 'failed' && r.changed === true);
  const why = task.until !== undefined ? 'until condition not met' : 'still failing';
  // ansible-core reports `attempts` as the number of retries once it gives up
  return { status: 'failed', msg: `${why} after ${attempts} attempt(s)${r.msg ? `: ${r.msg}` : ''}`, data: { ...(r.data ?? {}), attempts: total - 1 }, ...(changed ? { changed } : {}) };
}

/**
 * `async: N` (Ansible's asynchronous task): the task bounded by N seconds. With `poll` > 0 it is
 * waited for (kplay learns when it ends, so there is nothing to poll) and registers
 * `ansible_job_id`, `started`, `finished`; past the bound it fails as Ansible words it. With
 * `poll: 0` it runs in the background and the task returns at once (changed, `finished: false`);
 * `async_status` reads the job. `async: 0` runs the task as usual.
 */
async function runAsync(task: ModuleTask, mod: AnyModule, cs: ClusterState, pr: TaskHost, vars: Obj, kw: TaskKeywords, regSecrets: Set<string>): Promise<ModuleResult> {
  const seconds = await pr.intOf(task.async as number | string, vars);
  const poll = task.poll !== undefined ? await pr.intOf(task.poll, vars) : 15;
  if (seconds <= 0) return runOnce(task, mod, cs, pr, vars, kw, regSecrets);
  const bound = new AbortController();
  const timer = setTimeout(() => bound.abort(new Error(`async task did not complete within the requested time - ${seconds}s`)), seconds * 1000);
  const run = async (): Promise<ModuleResult> => {
    try {
      const r = await runOnce(task, mod, cs, pr, vars, kw, regSecrets, bound.signal);
      if (bound.signal.aborted && r.status !== 'ok' && r.status !== 'changed') return { status: 'failed', msg: `async task did not complete within the requested time - ${seconds}s`, data: { async_result: { ansible_job_id: jid, started: true, finished: false, stdout: '', stderr: '', stdout_lines: [], stderr_lines: [] } } };
      return r;
    } finally {
      clearTimeout(timer);
    }
  };
  let jid = '';
  if (poll > 0) {
    jid = jobId();
    const r = await run();
    return r.status === 'skipped' || r.status === 'failed' ? r : { ...r, data: { ...(r.data ?? {}), ansible_job_id: jid, started: true, finished: true } };
  }
  jid = startAsyncJob(cs.name, async () => {
    const r = await run();
    const registered = registeredValue(r);
    return { registered, failed: r.status === 'failed', changed: registered.changed === true, msg: r.msg };
  });
  return { status: 'changed', registerMsg: false, msg: `started job ${jid}`, data: { ansible_job_id: jid, started: true, finished: false } };
}

/** Render and validate the arguments, then call the module with a context. */
async function invoke(task: ModuleTask, mod: AnyModule, cs: ClusterState, pr: TaskHost, vars: Obj, kw: TaskKeywords, regSecrets: Set<string>, bound?: AbortSignal): Promise<ModuleResult> {
  const opts = pr.opts;
  const check = kw.check;
  if (check && mod.checkMode === 'unsupported') {
    return { status: 'skipped', msg: `skipped in check mode: module ${mod.name} does not support check mode` };
  }
  // lookups that produce secrets (password) declare them with the run's masker; k8s lookups are read first
  const prov = opts.masker.provenance;
  // what this task's lookups produced (kept here: other clusters' tasks declare values meanwhile)
  const looked: string[] = [];
  const fromLookup = (v: string): void => {
    looked.push(v);
    opts.masker.addDeclared(v, ['a lookup']);
  };
  const host = await lookupHost([task.args], vars, { ...moduleContext(task, cs, pr, vars, kw, opts.signal), addSecret: fromLookup });
  let args = await withLookups(host, () => templar.renderValue(task.args, vars, { where: task.pos, host }));
  // Values derived from secrets are secrets too (see taint.ts); kplay's own (`!secret`) are refused where they cannot be masked, the others warned of (sinks.ts).
  const lookedParts = looked.filter((v) => v.trim().length >= 4);
  const tainted: TaintedLeaf[] = lookedParts.length ? [{ path: [], sources: ['a lookup'], parts: lookedParts }] : [];
  tainted.push(...taintRendered(task.args, args, { vars, masker: opts.masker, cluster: cs.name }));
  if (args === null || args === undefined) args = {};
  if (typeof args === 'string' && mod.freeForm) args = { [mod.freeForm]: args };
  // module_defaults (play, block, task; groups first, then the module's own): the task's arguments win
  const defaults = moduleDefaultsFor(task.moduleDefaults, task.module);
  if (defaults && typeof args === 'object' && !Array.isArray(args)) {
    const rendered: Obj = {};
    for (const d of defaults) {
      const v = typeof d === 'string' ? await templar.render(d, vars, { where: task.pos }) : await templar.renderValue(d, vars, { where: task.pos });
      if (v === null || v === undefined) continue;
      if (typeof v !== 'object' || Array.isArray(v)) return { status: 'failed', msg: `${formatPos(task.pos)}: module_defaults for ${mod.name} must give a map of arguments, got ${JSON.stringify(v)?.slice(0, 80)}` };
      Object.assign(rendered, v);
    }
    args = { ...rendered, ...(args as Obj) };
  }
  args = withAliases(mod, args);
  const refusal = kcoreActionRefusal(mod.name, args);
  if (refusal) return { status: 'failed', msg: refusal };
  if (mod.variableKeys && isRecord(args)) {
    const named = await variableKeys(args, vars, task);
    if (typeof named === 'string') return { status: 'failed', msg: named };
    args = named;
  }
  // `wait: yes`, `force: on`: Ansible's boolean spellings where the module declares a boolean
  args = ansibleBooleans(mod.schema, args);
  const checked = validateArgs(mod.schema, args, { defaults: true });
  if (!checked.ok) return { status: 'failed', msg: argumentsMessage(checked.errors, mod, args, task) };
  args = checked.value;
  if (tainted.length) {
    const hits = secretSinks(mod.name, args, tainted);
    const refused = refuseHits(hits, () => vars[ALLOW_VAR], { task: task.name ?? mod.name, cluster: cs.name }, (t) => opts.masker.mask(t));
    if (refused) return { status: 'failed', msg: refused };
    for (const h of hits) if (h.own) for (const s of h.sources) regSecrets.add(s);
    const warning = hitsWarning(hits, (t) => opts.masker.mask(t));
    if (warning) opts.emit({ type: 'log', level: 'warn', cluster: cs.name, task: task.name ?? mod.name, msg: warning });
  }
  if (!check && mod.usesCluster && !mod.readOnly && opts.beforeFirstChange) {
    cs.firstChange ??= opts.beforeFirstChange(cs, vars);
    await cs.firstChange;
  }
  const lost = (): ModuleResult => ({ status: 'failed', msg: errorMessage(cs.lockLost.signal.reason) });
  if (!check && mod.usesCluster && !mod.readOnly && cs.lockLost.signal.aborted) return lost();
  const signals = [opts.signal, cs.lockLost.signal];
  if (task.timeout) signals.push(AbortSignal.timeout(task.timeout * 1000));
  if (bound) signals.push(bound);
  const signal = signals.length > 1 ? AbortSignal.any(signals) : opts.signal;
  // A module may have many requests in flight on this signal (k8s_apply plans 16 objects at once,
  // each request and retry sleep listens for abort): not a leak, so no MaxListenersExceededWarning.
  setMaxListeners(0, signal);
  const ctx = moduleContext(task, cs, pr, vars, kw, signal, host);
  const timeoutMsg = (): ModuleResult => ({ status: 'failed', msg: `task timed out after ${task.timeout}s` });
  let result: ModuleResult;
  try {
    result = await (mod.run as (a: unknown, c: ModuleContext) => Promise<ModuleResult>)(args, ctx);
  } catch (e) {
    if (e instanceof UnreachableError) throw e;
    if (cs.lockLost.signal.aborted) return lost();
    if (task.timeout && signal.aborted && !opts.signal.aborted) return timeoutMsg();
    if (e instanceof InputError) return { status: 'failed', msg: e.describe() };
    if (e instanceof SecretSinkError) return { status: 'failed', msg: e.message };
    return { status: 'failed', msg: `module ${mod.name} failed unexpectedly: ${errorMessage(e)}`, cause: e instanceof Error ? e.stack : undefined };
  }
  if (cs.lockLost.signal.aborted && result.status !== 'ok' && result.status !== 'changed') return keepingWrites(lost(), result);
  if (task.timeout && signal.aborted && !opts.signal.aborted && result.status !== 'ok' && result.status !== 'changed') return keepingWrites(timeoutMsg(), result);
  // `KPLAY_CHECK_RESULTS=1` (the test suite sets it): check what modules return against their `result` schema
  if (setting('checkResults') && (result.status === 'ok' || result.status === 'changed')) {
    const wrong = resultMismatch(mod, result.data ?? {});
    if (wrong) return { status: 'failed', msg: `module ${mod.name} returned data that does not match its declared result schema: ${wrong}` };
  }
  if ((result.status === 'ok' || result.status === 'changed') && result.facts) {
    // include_vars' variables are a layer of their own, below set_fact (their templates are rendered when used)
    if (mod.name === 'include_vars') Object.assign(cs.includedVars, result.facts);
    else Object.assign(cs.facts, result.facts);
    // facts set from declared secrets, or by a no_log task, are secrets as a whole
    // (a fact holding a map is tainted where its templates were: `{kind: Secret, stringData: {pw: "{{ pw }}"}}` keeps a usable name)
    for (const [k, v] of Object.entries(result.facts)) {
      const whole = tainted.filter((l) => l.path.length === 0 || (l.path[0] === k && l.path.length === 1));
      const from = kw.hide ? [`the no_log task '${task.name ?? mod.name}'`] : whole.flatMap((l) => l.sources);
      prov.setVar(cs.name, k, from.length ? [...new Set(from)] : undefined, whole.some((l) => l.own));
      for (const l of tainted) if (l.path.length > 1 && l.path[0] === k) prov.addLeaves(l.path.slice(1).reduce<unknown>((o, s) => (o !== null && typeof o === 'object' ? (o as Record<string | number, unknown>)[s] : undefined), v), l.sources, l.own);
    }
  }
  // the data of Secrets a task read is declared (`k8s_info` of a Secret, then `data.password | b64decode`); what a task
  // wrote into a Secret came from this playbook's variables, declared or not by their own source (`db_user: postgres` is not)
  if ((result.status === 'ok' || result.status === 'changed') && mod.usesCluster && mod.readOnly && result.data) prov.addSecretObjects(result.data);
  return result;
}

/**
 * set_fact's keys as ansible-core reads them when the task runs: each rendered (`"{{ k }}": v`)
 * and checked as a variable name; a bad one is the task's failure, in ansible-core's words.
 */
async function variableKeys(args: Obj, vars: Obj, task: ModuleTask): Promise<Obj | string> {
  const out: Obj = {};
  for (const [k, v] of Object.entries(args)) {
    const name: unknown = Templar.isTemplated(k) ? await templar.renderValue(k, vars, { where: task.pos }) : k;
    const problem = variableNameProblem(name);
    if (problem) return `Task failed: ${problem}`;
    out[String(name)] = v;
  }
  return out;
}

function labelOf(item: unknown): string {
  const s = typeof item === 'string' ? item : JSON.stringify(item);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
