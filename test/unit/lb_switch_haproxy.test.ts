/**
 * lb_switch with provider haproxy against REAL HAProxy processes (no Kubernetes needed).
 * Fails (never skips) when haproxy is not installed.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import lbSwitch from '../../modules/lb_switch.js';
import type { HaproxySwitchArgs } from '../../src/lb/index.js';
import { parse as parseYaml } from 'yaml';
import { compileSchema } from '../../src/load/schema.js';
import type { ModuleResult } from '../../src/core/module.js';
import { makeCtx, runModule, type TestContext } from '../helpers/ctx.js';
import {
  get,
  rawCommand,
  requireHaproxy,
  scur,
  serverState,
  spread,
  startBackends,
  startHaproxy,
  type Backends,
  type HaproxyInstance,
} from '../helpers/haproxy.js';

type Args = Partial<Omit<HaproxySwitchArgs, 'provider'>> & { provider?: 'haproxy' };

async function run(args: Args, ctx: TestContext = makeCtx()): Promise<ModuleResult> {
  const full = { provider: 'haproxy' as const, ...args };
  return runModule(lbSwitch, full, ctx);
}
const data = (r: ModuleResult): Record<string, unknown> => ('data' in r && r.data) || {};
const msg = (r: ModuleResult): string => ('msg' in r && r.msg) || '';

// srv_admin_state flags
const FMAINT = 0x01;
const FDRAIN = 0x08;

let backends: Backends;
let a: HaproxyInstance;
let b: HaproxyInstance;

describe('prerequisites', () => {
  // An explicit failing test (not only a failing beforeAll, which vitest shows as skipped tests).
  it('haproxy is installed', () => {
    expect(() => requireHaproxy()).not.toThrow();
  });
});

describe('lb_switch schema', () => {
  it('compiles in ajv strict mode; provider enum only lists implemented providers', () => {
    const v = compileSchema(lbSwitch.schema);
    expect(v({ provider: 'haproxy', socket: '/x', backend: 'b', server: 's', state: 'drain' })).toBe(true);
    expect(v({ provider: 'haproxy', socket: '/x', backend: 'b', server: 's', state: 'drain', weight: '50%' })).toBe(true);
    expect(v({ provider: 'haproxy', socket: '/x', backend: 'b', server: 's', state: 'drain', weight: 300 })).toBe(false);
    expect(v({ provider: 'haproxy', socket: '/x', backend: 'b', state: 'drain' })).toBe(false);
    expect(v({ provider: 'k8s_service', socket: '/x', backend: 'b', server: 's', state: 'drain' })).toBe(false);
    expect(v({ provider: 'haproxy', socket: '/x', backend: 'b', server: 's', state: 'off' })).toBe(false);
    expect(v({ provider: 'haproxy', socket: '/x', backend: 'b', server: 's', state: 'ready', extra: 1 })).toBe(false);
    const props = (lbSwitch.schema as unknown as { properties: Record<string, { description?: string }> }).properties;
    for (const [k, p] of Object.entries(props)) expect(p.description, k).toBeTruthy();
  });

  it('every documented example is valid', () => {
    const v = compileSchema(lbSwitch.schema);
    for (const ex of lbSwitch.examples) {
      const [task] = parseYaml(ex.yaml) as Record<string, unknown>[];
      expect(v(task?.lb_switch), `${ex.title}: ${JSON.stringify(v.errors)}`).toBe(true);
    }
  });
});

describe('lb_switch provider haproxy (real HAProxy)', () => {
  beforeAll(async () => {
    requireHaproxy();
    backends = await startBackends(1500);
    a = await startHaproxy(backends, { tcpSocket: true });
    b = await startHaproxy(backends, { tcpSocket: true, operatorSocket: true });
  }, 60_000);

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await backends?.close();
  });

  /** Reset both instances: every server ready at its configured weight. */
  beforeEach(async () => {
    for (const inst of [a, b]) {
      for (const s of ['s1', 's2']) {
        await rawCommand(inst.sock, `set server be_app/${s} state ready`);
        await rawCommand(inst.sock, `set server be_app/${s} weight 10`);
      }
    }
  });

  it('round-robins over s1 and s2 before any switch (sanity)', async () => {
    expect(await spread(a.port, 6)).toEqual({ s1: 3, s2: 3 });
  });

  it('drain s1 → all new requests go to s2; reports previous/current state', async () => {
    const r = await run({ socket: a.sock, backend: 'be_app', server: 's1', state: 'drain' });
    expect(r.status).toBe('changed');
    const d = data(r);
    expect(d.provider).toBe('haproxy');
    expect(d.target).toBe(`be_app/s1 @ ${a.sock}`);
    expect(d.previous).toEqual({ admin_state: 'ready', operational_state: 'up', weight: 10 });
    expect(d.current).toEqual({ admin_state: 'drain', operational_state: 'up', weight: 10 });
    expect(msg(r)).toContain('ready → drain');
    expect(await spread(a.port, 8)).toEqual({ s2: 8 });
    expect((await serverState(a.sock, 'be_app', 's1')).admin & FDRAIN).toBeTruthy();
    // The other instance is untouched.
    expect((await serverState(b.sock, 'be_app', 's1')).admin).toBe(0);
  });

  it('a second identical run reports ok (not changed) and sends no set command', async () => {
    expect((await run({ socket: a.sock, backend: 'be_app', server: 's1', state: 'drain' })).status).toBe('changed');
    const ctx = makeCtx();
    const again = await run({ socket: a.sock, backend: 'be_app', server: 's1', state: 'drain' }, ctx);
    expect(again.status).toBe('ok');
    expect(msg(again)).toContain('already drain');
    expect(ctx.logs.info).toEqual([]);
  });

  it('ready → traffic returns to both servers', async () => {
    await rawCommand(a.sock, 'set server be_app/s1 state drain');
    expect(await spread(a.port, 4)).toEqual({ s2: 4 });
    const r = await run({ socket: a.sock, backend: 'be_app', server: 's1', state: 'ready' });
    expect(r.status).toBe('changed');
    expect(data(r).previous).toMatchObject({ admin_state: 'drain' });
    expect(data(r).current).toMatchObject({ admin_state: 'ready' });
    const counts = await spread(a.port, 6);
    expect(counts.s1).toBeGreaterThan(0);
    expect(counts.s2).toBeGreaterThan(0);
  });

  it('wait_drained waits for the in-flight request on s1 to finish', async () => {
    const slow = get(a.port, '/pin/s1/slow');
    slow.catch(() => undefined);
    // Wait until HAProxy has the long request on s1.
    const until = Date.now() + 5000;
    while ((await scur(a.sock, 'be_app', 's1')) === 0) {
      if (Date.now() > until) throw new Error('the slow request never reached s1');
      await new Promise((r) => setTimeout(r, 20));
    }
    const t0 = Date.now();
    const ctx = makeCtx();
    const r = await run({ socket: a.sock, backend: 'be_app', server: 's1', state: 'drain', wait_drained: true }, ctx);
    const took = Date.now() - t0;
    expect(r.status).toBe('changed');
    expect(took).toBeGreaterThanOrEqual(900);
    const drain = data(r).drain as { sessions_at_start: number; waited_ms: number; sessions_now: number };
    expect(drain.sessions_at_start).toBe(1);
    expect(drain.sessions_now).toBe(0);
    expect(drain.waited_ms).toBeGreaterThanOrEqual(800);
    expect(msg(r)).toMatch(/1 session\(s\) drained in \d+ ms/);
    expect(await scur(a.sock, 'be_app', 's1')).toBe(0);
    expect(await slow).toBe('s1'); // the in-flight request completed normally
    expect(ctx.logs.progress.some((l) => l.includes('waiting for be_app/s1'))).toBe(true);
  });

  it('wait_drained fails after drain_timeout, naming the sessions left', async () => {
    const slow = get(a.port, '/pin/s1/slow');
    slow.catch(() => undefined);
    const until = Date.now() + 5000;
    while ((await scur(a.sock, 'be_app', 's1')) === 0) {
      if (Date.now() > until) throw new Error('the slow request never reached s1');
      await new Promise((r) => setTimeout(r, 20));
    }
    const r = await run({ socket: a.sock, backend: 'be_app', server: 's1', state: 'drain', wait_drained: true, drain_timeout: 0.3 });
    expect(r.status).toBe('failed');
    expect(msg(r)).toContain('still has 1 session(s)');
    expect(msg(r)).toContain('drain_timeout 0.3s');
    await slow;
  });

  it('check mode reads only and reports what would change', async () => {
    const ctx = makeCtx({ checkMode: true, diffMode: true });
    const r = await run({ socket: a.sock, backend: 'be_app', server: 's1', state: 'maint', weight: 0 }, ctx);
    expect(r.status).toBe('changed');
    expect(msg(r)).toContain('would switch');
    expect(msg(r)).toContain('ready → maint, weight 10 → 0');
    expect(data(r).current).toMatchObject({ admin_state: 'maint', weight: 0 });
    expect(await serverState(a.sock, 'be_app', 's1')).toEqual({ admin: 0, op: 2, weight: 10 });
    expect('diff' in r && r.diff?.[0]?.after).toContain('admin_state: maint');
  });

  it('maint + weight (absolute and percentage), verified by reading back; diff shows before/after', async () => {
    const ctx = makeCtx({ diffMode: true });
    const r = await run({ socket: a.sock, backend: 'be_app', server: 's1', state: 'maint', weight: '50%' }, ctx);
    expect(r.status).toBe('changed');
    expect(data(r).current).toEqual({ admin_state: 'maint', operational_state: 'down', weight: 5 });
    const st = await serverState(a.sock, 'be_app', 's1');
    expect(st.admin & FMAINT).toBeTruthy();
    expect(st.weight).toBe(5);
    expect(await spread(a.port, 4)).toEqual({ s2: 4 });
    expect('diff' in r && r.diff).toEqual([
      {
        label: `haproxy be_app/s1 @ ${a.sock}`,
        before: 'admin_state: ready\noperational_state: up\nweight: 10\n',
        after: 'admin_state: maint\noperational_state: down\nweight: 5\n',
      },
    ]);
    // Same state again, weight given as the equivalent absolute value: ok.
    expect((await run({ socket: a.sock, backend: 'be_app', server: 's1', state: 'maint', weight: 5 })).status).toBe('ok');
    // Back to ready with weight 3 out of 10: ready and weighted.
    const back = await run({ socket: a.sock, backend: 'be_app', server: 's1', state: 'ready', weight: 3 });
    expect(back.status).toBe('changed');
    expect(await serverState(a.sock, 'be_app', 's1')).toMatchObject({ admin: 0, weight: 3 });
  });

  it('works over a TCP admin socket', async () => {
    const r = await run({ socket: a.extra.tcp, backend: 'be_app', server: 's2', state: 'drain' });
    expect(r.status).toBe('changed');
    expect(data(r).target).toBe(`be_app/s2 @ ${a.extra.tcp}`);
    expect((await serverState(a.sock, 'be_app', 's2')).admin & FDRAIN).toBeTruthy();
  });

  it('bad socket path → clear error', async () => {
    const r = await run({ socket: '/nonexistent/admin.sock', backend: 'be_app', server: 's1', state: 'drain' });
    expect(r.status).toBe('failed');
    expect(msg(r)).toContain(
      'cannot connect to HAProxy runtime API at /nonexistent/admin.sock: ENOENT — is HAProxy running with `stats socket /nonexistent/admin.sock level admin`?',
    );
    const tcp = await run({ socket: 'tcp://127.0.0.1:1', backend: 'be_app', server: 's1', state: 'drain' });
    expect(msg(tcp)).toContain('cannot connect to HAProxy runtime API at tcp://127.0.0.1:1: ECONNREFUSED');
  });

  it('unknown server → error listing the known servers', async () => {
    const r = await run({ socket: a.sock, backend: 'be_app', server: 's9', state: 'drain' });
    expect(r.status).toBe('failed');
    expect(msg(r)).toContain(`unknown server 's9' in backend 'be_app' on HAProxy at ${a.sock}; known servers: s1, s2`);
  });

  it('unknown backend → error listing the known backends', async () => {
    const r = await run({ socket: a.sock, backend: 'be_nope', server: 's1', state: 'drain' });
    expect(r.status).toBe('failed');
    expect(msg(r)).toContain(`unknown backend 'be_nope' on HAProxy at ${a.sock}; known backends: be_app, be_other`);
  });

  it('a socket without admin level: HAProxy refuses, and the error says why', async () => {
    const r = await run({ socket: b.extra.operator, backend: 'be_app', server: 's1', state: 'drain' });
    expect(r.status).toBe('failed');
    expect(msg(r)).toContain('Permission denied');
    expect(msg(r)).toContain('level admin');
    expect((await serverState(b.sock, 'be_app', 's1')).admin).toBe(0);
  });

  it('sockets: two HAProxy instances switched together', async () => {
    const r = await run({ sockets: [a.sock, b.extra.tcp], backend: 'be_app', server: 's1', state: 'drain' });
    expect(r.status).toBe('changed');
    const inst = data(r).instances as { socket: string; changed: boolean; current: { admin_state: string } }[];
    expect(inst.map((i) => [i.socket, i.changed, i.current.admin_state])).toEqual([
      [a.sock, true, 'drain'],
      [b.extra.tcp, true, 'drain'],
    ]);
    expect(await spread(a.port, 4)).toEqual({ s2: 4 });
    expect(await spread(b.port, 4)).toEqual({ s2: 4 });
    // Idempotent across instances; and only the instance that differs is switched.
    expect((await run({ sockets: [a.sock, b.sock], backend: 'be_app', server: 's1', state: 'drain' })).status).toBe('ok');
    await rawCommand(b.sock, 'set server be_app/s1 state ready');
    const partial = await run({ sockets: [a.sock, b.sock], backend: 'be_app', server: 's1', state: 'drain' });
    expect(partial.status).toBe('changed');
    expect((data(partial).instances as { changed: boolean }[]).map((i) => i.changed)).toEqual([false, true]);
  });

  it('sockets: a bad socket → nothing is switched anywhere (everything is read first)', async () => {
    const r = await run({ sockets: [a.sock, '/nonexistent/admin.sock'], backend: 'be_app', server: 's1', state: 'maint' });
    expect(r.status).toBe('failed');
    expect(msg(r)).toContain('cannot connect to HAProxy runtime API at /nonexistent/admin.sock');
    expect(msg(r)).toContain('nothing was switched');
    expect((await serverState(a.sock, 'be_app', 's1')).admin).toBe(0);
  });

  it('sockets: switching fails on the second instance → the first is reverted', async () => {
    const r = await run({ sockets: [a.sock, b.extra.operator], backend: 'be_app', server: 's1', state: 'maint', weight: 0 });
    expect(r.status).toBe('failed');
    expect(msg(r)).toContain(`switching be_app/s1 @ ${b.extra.operator} failed`);
    expect(msg(r)).toContain('Permission denied');
    expect(msg(r)).toContain(`reverted be_app/s1 @ ${a.sock} to ready (weight 10)`);
    expect(data(r).failed_socket).toBe(b.extra.operator);
    expect(await serverState(a.sock, 'be_app', 's1')).toMatchObject({ admin: 0, weight: 10 });
    expect(await spread(a.port, 4)).toEqual({ s1: 2, s2: 2 });
  });

  it('stops waiting on ctx.signal', async () => {
    const slow = get(a.port, '/pin/s1/slow');
    slow.catch(() => undefined);
    const until = Date.now() + 5000;
    while ((await scur(a.sock, 'be_app', 's1')) === 0) {
      if (Date.now() > until) throw new Error('the slow request never reached s1');
      await new Promise((r) => setTimeout(r, 20));
    }
    const ctx = makeCtx();
    setTimeout(() => ctx.abort.abort(), 300);
    const r = await run({ socket: a.sock, backend: 'be_app', server: 's1', state: 'drain', wait_drained: true }, ctx);
    expect(r.status).toBe('failed');
    expect(msg(r)).toContain('aborted while waiting for be_app/s1');
    await slow;
  });
});
