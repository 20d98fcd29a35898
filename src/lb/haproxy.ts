/**
 * `lb_switch` provider `haproxy`: set a server's administrative state (ready / drain / maint)
 * and weight through the HAProxy runtime API, optionally on several HAProxy instances at once
 * (all-or-nothing), and optionally wait until the server has no sessions left.
 */
import type { DiffEntry, ModuleContext, ModuleResult } from '../core/module.js';
import { errorMessage } from '../load/errors.js';
import { Default, Type, type Args } from '../core/args.js';
import type { LbProvider } from './provider.js';
import { sleep } from '../core/sleep.js';
import { BACKEND_PROPERTY, STATE_PROPERTY, WEIGHT_PROPERTY } from './shared.js';
import {
  parseBackendList,
  parseEndpoint,
  parseServersState,
  parseStatCsv,
  runtimeCommand,
  runtimeSet,
  RuntimeApiError,
  serverStateOf,
  type AdminState,
  type OperState,
  type RuntimeEndpoint,
  type ServerState,
} from './haproxy_runtime.js';

const schema = Type.Object({
  provider: Type.Literal('haproxy'),
  socket: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        '(haproxy) Runtime API socket of one HAProxy: a unix socket path or `tcp://HOST:PORT`; HAProxy needs `stats socket <path> level admin`. Exactly one of `socket` / `sockets`.',
      'x-kplay-example': '/run/haproxy/admin.sock',
    }),
  ),
  sockets: Type.Optional(
    Type.Array(Type.String({ minLength: 1 }), {
      minItems: 1,
      description:
        '(haproxy) Runtime API sockets of several HAProxy instances switched together, all-or-nothing: all are read first; if switching one fails, those already switched are reverted.',
    }),
  ),
  backend: BACKEND_PROPERTY,
  server: Type.String({ minLength: 1, description: '(haproxy, required) Server name inside `backend`.' }),
  state: STATE_PROPERTY,
  weight: Type.Optional(WEIGHT_PROPERTY),
  wait_drained: Default(
    Type.Boolean({
      description:
        '(haproxy) With `state: drain` or `maint`, wait until the server has no current sessions (`scur` of `show stat`, polled every 200 ms), also when it was already in that state.',
    }),
    false,
  ),
  drain_timeout: Default(Type.Number({ exclusiveMinimum: 0, description: '(haproxy) Seconds `wait_drained` waits before failing with the number of sessions left.' }), 300),
});

/** Arguments of `lb_switch` with `provider: haproxy` (after defaults). */
export type HaproxySwitchArgs = Args<typeof schema>;

/** How often `wait_drained` polls `show stat` (HAProxy has no push API). */
export const DRAIN_POLL_MS = 200;

/** State shown in results and diffs. */
export interface ShownState {
  /** `ready`, `drain` or `maint`. */
  admin_state: AdminState;
  /** `up`, `down`, `starting` or `stopping` (health; `down` while in maintenance). */
  operational_state: OperState | 'unknown';
  /** Current weight. */
  weight: number;
}

/** The outcome on one HAProxy instance. */
interface Instance {
  ep: RuntimeEndpoint;
  target: string;
  before?: ServerState;
  after?: ServerState;
  wantWeight?: number;
  changed: boolean;
  switched: boolean;
  drain?: { sessions_at_start: number; waited_ms: number; sessions_now: number };
}

function shown(s: ServerState): ShownState {
  return { admin_state: s.admin, operational_state: s.oper, weight: s.weight };
}

function stateText(s: ShownState | undefined): string {
  if (!s) return '';
  return `admin_state: ${s.admin_state}\noperational_state: ${s.operational_state}\nweight: ${s.weight}\n`;
}

/** Absolute weight HAProxy will apply for `weight` given the configured weight (same rounding as HAProxy). */
export function targetWeight(weight: number | string, initialWeight: number): number {
  if (typeof weight === 'number') return weight;
  const pct = Math.min(Number.parseInt(weight, 10), 25600);
  return Math.min(256, Math.floor((initialWeight * pct) / 100));
}


/** Read one server's state; unknown backend / server errors list what exists. */
async function readServer(ep: RuntimeEndpoint, backend: string, server: string, signal: AbortSignal): Promise<ServerState> {
  const text = await runtimeCommand(ep, `show servers state ${backend}`, { signal });
  let rows;
  try {
    rows = parseServersState(text);
  } catch (e) {
    if (/can't find backend|no such backend/i.test(text)) {
      let known = '';
      try {
        known = parseBackendList(await runtimeCommand(ep, 'show backend', { signal })).join(', ');
      } catch {
        // keep the main error
      }
      throw new RuntimeApiError(`unknown backend '${backend}' on HAProxy at ${ep.display}${known ? `; known backends: ${known}` : ''}`);
    }
    throw new RuntimeApiError(`unexpected answer to \`show servers state ${backend}\` from ${ep.display}: ${errorMessage(e)}`);
  }
  const row = rows.find((r) => r.srv_name === server);
  if (!row) {
    const known = rows.map((r) => r.srv_name).join(', ');
    throw new RuntimeApiError(
      `unknown server '${server}' in backend '${backend}' on HAProxy at ${ep.display}; known servers: ${known || '(none)'}`,
    );
  }
  return serverStateOf(row);
}

/** Current sessions of a server (`scur` of `show stat <backend> 4 <srv_id>`). */
async function currentSessions(ep: RuntimeEndpoint, s: ServerState, signal: AbortSignal): Promise<number> {
  const text = await runtimeCommand(ep, `show stat ${s.backend} 4 ${s.id}`, { signal });
  const rows = parseStatCsv(text);
  const row = rows.find((r) => r.pxname === s.backend && r.svname === s.server);
  const scur = row?.scur;
  if (scur === undefined || !/^\d+$/.test(scur)) {
    throw new RuntimeApiError(`\`show stat\` on ${ep.display} has no session count for ${s.backend}/${s.server}`);
  }
  return Number(scur);
}

/** Apply admin state and weight (weight first when going to ready, so traffic resumes at the right weight). */
async function apply(ep: RuntimeEndpoint, cur: ServerState, admin: AdminState, weight: number | undefined, signal: AbortSignal): Promise<void> {
  const name = `${cur.backend}/${cur.server}`;
  const setState = async (): Promise<void> => {
    if (cur.admin !== admin) await runtimeSet(ep, `set server ${name} state ${admin}`, { signal });
  };
  const setWeight = async (): Promise<void> => {
    if (weight !== undefined && cur.weight !== weight) await runtimeSet(ep, `set server ${name} weight ${weight}`, { signal });
  };
  if (admin === 'ready') {
    await setWeight();
    await setState();
  } else {
    await setState();
    await setWeight();
  }
}

function describeChange(i: Instance, wantAdmin: AdminState): string {
  const b = i.before;
  if (!b) return '';
  const parts: string[] = [];
  if (b.admin !== wantAdmin) parts.push(`${b.admin} → ${wantAdmin}`);
  if (i.wantWeight !== undefined && b.weight !== i.wantWeight) parts.push(`weight ${b.weight} → ${i.wantWeight}`);
  return parts.join(', ');
}

/** Wait until the server's current sessions reach 0 (or timeout / abort). */
async function waitDrained(i: Instance, timeoutMs: number, ctx: ModuleContext): Promise<string | undefined> {
  const s = i.after ?? i.before;
  if (!s) return undefined;
  const started = Date.now();
  let scur = await currentSessions(i.ep, s, ctx.signal);
  i.drain = { sessions_at_start: scur, waited_ms: 0, sessions_now: scur };
  while (scur > 0) {
    const waited = Date.now() - started;
    if (waited >= timeoutMs) {
      i.drain.waited_ms = waited;
      return `${i.target} still has ${scur} session(s) after waiting ${Math.round(waited / 100) / 10}s (drain_timeout ${timeoutMs / 1000}s)`;
    }
    ctx.log.progress(`waiting for ${i.target} to drain: ${scur} session(s) left (${Math.round(waited / 1000)}s)`);
    if (!(await sleep(Math.min(DRAIN_POLL_MS, Math.max(1, timeoutMs - waited)), ctx.signal))) {
      i.drain.waited_ms = Date.now() - started;
      return `aborted while waiting for ${i.target} to drain (${scur} session(s) left)`;
    }
    scur = await currentSessions(i.ep, s, ctx.signal);
    i.drain.sessions_now = scur;
  }
  i.drain.waited_ms = Date.now() - started;
  return undefined;
}

function instanceData(i: Instance, ctx: ModuleContext, wantAdmin: AdminState): Record<string, unknown> {
  const predicted: ShownState | undefined =
    ctx.checkMode && i.before
      ? { admin_state: wantAdmin, operational_state: i.before.admin === wantAdmin ? i.before.oper : 'unknown', weight: i.wantWeight ?? i.before.weight }
      : undefined;
  const d: Record<string, unknown> = {
    socket: i.ep.display,
    target: i.target,
    changed: i.changed,
  };
  if (i.before) d.previous = shown(i.before);
  const cur = predicted ?? (i.after ? shown(i.after) : undefined);
  if (cur) d.current = cur;
  if (i.drain) d.drain = i.drain;
  return d;
}

async function run(args: HaproxySwitchArgs, ctx: ModuleContext): Promise<ModuleResult> {
  const { backend, server, state } = args;
  if ((args.socket === undefined) === (args.sockets === undefined)) {
    return { status: 'failed', msg: 'lb_switch (haproxy): give exactly one of `socket` or `sockets`' };
  }
  const sockets = args.sockets ?? [args.socket ?? ''];
  if (new Set(sockets).size !== sockets.length) {
    return { status: 'failed', msg: 'lb_switch (haproxy): `sockets` lists the same socket twice' };
  }
  const instances: Instance[] = [];
  try {
    for (const s of sockets) {
      const ep = parseEndpoint(s);
      instances.push({ ep, target: `${backend}/${server} @ ${ep.display}`, changed: false, switched: false });
    }
  } catch (e) {
    return { status: 'failed', msg: `lb_switch (haproxy): ${errorMessage(e)}` };
  }
  const label = `${backend}/${server}`;
  const where = instances.length === 1 && instances[0] ? instances[0].target : `${label} on ${instances.length} HAProxy instances`;
  const data = (extra: Record<string, unknown> = {}): Record<string, unknown> => {
    const list = instances.map((i) => instanceData(i, ctx, state));
    const d: Record<string, unknown> = {
      provider: 'haproxy',
      backend,
      server,
      state,
      ...(args.weight !== undefined ? { weight: args.weight } : {}),
      target: instances.length === 1 && instances[0] ? instances[0].target : `${label} @ ${instances.map((i) => i.ep.display).join(', ')}`,
      instances: list,
      ...extra,
    };
    const only = list.length === 1 ? list[0] : undefined;
    if (only) for (const k of ['socket', 'previous', 'current', 'drain']) if (k in only) d[k] = only[k];
    return d;
  };
  const diff = (): DiffEntry[] | undefined =>
    ctx.diffMode
      ? instances
          .filter((i) => i.before)
          .map((i) => {
            const cur = instanceData(i, ctx, state).current as ShownState | undefined;
            return { label: `haproxy ${i.target}`, before: stateText(i.before && shown(i.before)), after: stateText(cur) };
          })
      : undefined;
  const withDiff = <R extends ModuleResult>(r: R): R => {
    const d = diff();
    return d && r.status !== 'skipped' ? { ...r, diff: d } : r;
  };

  // 1. Read every instance first: nothing is switched unless all can be read.
  const reads = await Promise.allSettled(instances.map((i) => readServer(i.ep, backend, server, ctx.signal)));
  const readErrors: string[] = [];
  reads.forEach((r, n) => {
    const inst = instances[n];
    if (r.status === 'fulfilled') {
      if (inst) inst.before = r.value;
    } else readErrors.push(errorMessage(r.reason));
  });
  if (readErrors.length > 0) {
    const nothing = instances.length > 1 ? ' (nothing was switched)' : '';
    return { status: 'failed', msg: `lb_switch ${label}: ${readErrors.join('; ')}${nothing}`, data: data() };
  }
  for (const i of instances) {
    const b = i.before as ServerState;
    if (args.weight !== undefined) i.wantWeight = targetWeight(args.weight, b.initialWeight);
    i.changed = b.admin !== state || (i.wantWeight !== undefined && b.weight !== i.wantWeight);
  }
  const toChange = instances.filter((i) => i.changed);
  const drainWanted = args.wait_drained && state !== 'ready';

  // 2. Check mode: report only.
  if (ctx.checkMode) {
    if (toChange.length === 0) return withDiff({ status: 'ok', msg: `${where}: already ${state}`, data: data() });
    const what = toChange.map((i) => `${i.target}: ${describeChange(i, state)}`).join('; ');
    return withDiff({ status: 'changed', msg: `would switch ${what}${drainWanted ? ' and wait for it to drain' : ''}`, data: data() });
  }

  // 3. Switch, all-or-nothing; verify by reading back.
  for (const i of toChange) {
    const b = i.before as ServerState;
    try {
      ctx.log.info(`lb_switch: ${i.target}: ${describeChange(i, state)}`);
      i.switched = true;
      await apply(i.ep, b, state, i.wantWeight, ctx.signal);
      const after = await readServer(i.ep, backend, server, ctx.signal);
      i.after = after;
      if (after.admin !== state || (i.wantWeight !== undefined && after.weight !== i.wantWeight)) {
        throw new RuntimeApiError(
          `after switching, HAProxy reports ${after.admin} with weight ${after.weight}` +
            ` (wanted ${state}${i.wantWeight !== undefined ? ` with weight ${i.wantWeight}` : ''}; admin flags 0x${after.adminFlags.toString(16)})`,
        );
      }
    } catch (e) {
      const failure = `switching ${i.target} failed: ${errorMessage(e)}`;
      const reverts: string[] = [];
      for (const done of instances.filter((x) => x.switched)) {
        const prev = done.before as ServerState;
        try {
          const now = await readServer(done.ep, backend, server, new AbortController().signal);
          await apply(done.ep, now, prev.admin, prev.weight, new AbortController().signal);
          done.after = await readServer(done.ep, backend, server, new AbortController().signal);
          done.switched = false;
          if (done !== i) reverts.push(`reverted ${done.target} to ${prev.admin} (weight ${prev.weight})`);
        } catch (re) {
          reverts.push(`could NOT revert ${done.target}: ${errorMessage(re)}`);
        }
      }
      const revertText = reverts.length ? `; ${reverts.join('; ')}` : '';
      return withDiff({ status: 'failed', msg: `lb_switch ${label}: ${failure}${revertText}`, data: data({ failed_socket: i.ep.display }) });
    }
  }
  for (const i of instances) if (!i.after) i.after = i.before;

  // 4. Optionally wait for the sessions to end, on all instances at once.
  let drainError: string | undefined;
  if (drainWanted) {
    const timeoutMs = args.drain_timeout * 1000;
    const results = await Promise.allSettled(instances.map((i) => waitDrained(i, timeoutMs, ctx)));
    const errs = results.map((r) => (r.status === 'fulfilled' ? r.value : errorMessage(r.reason))).filter((m): m is string => !!m);
    if (errs.length) drainError = errs.join('; ');
  } else if (args.wait_drained && state === 'ready') {
    ctx.log.debug('lb_switch: wait_drained ignored for state ready');
  }

  const changedAny = toChange.length > 0;
  const summary = changedAny ? toChange.map((i) => `${i.target}: ${describeChange(i, state)}`).join('; ') : `${where}: already ${state}`;
  const drained = instances
    .filter((i) => i.drain)
    .map((i) =>
      i.drain?.sessions_at_start
        ? `${i.drain.sessions_at_start} session(s) drained in ${i.drain.waited_ms} ms`
        : 'no sessions to drain',
    )
    .join(', ');
  if (drainError) {
    return withDiff({ status: 'failed', msg: `lb_switch ${label}: ${summary}; ${drainError}`, data: data() });
  }
  const msg = drained ? `${summary}; ${drained}` : summary;
  return withDiff({ status: changedAny ? 'changed' : 'ok', msg, data: data() });
}

/** The `haproxy` provider. */
export const haproxyProvider: LbProvider<typeof schema> = {
  name: 'haproxy',
  summary: 'HAProxy runtime API (stats socket): `set server <backend>/<server> state|weight`.',
  narrow: {
    weight: {
      oneOf: [
        { type: 'integer', minimum: 0, maximum: 256 },
        { type: 'string', pattern: '^[0-9]{1,5}%$' },
      ],
    },
  },
  schema,
  run,
};
