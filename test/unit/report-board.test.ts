// The live board (`kplay run --progress board`): events → state → lines (pure layout at 80
// columns with 3 and 300 clusters, truncation, NO_COLOR), and the reporter's redraw/recap output.
import { describe, expect, it } from 'vitest';
import { layoutBoard, truncate } from '../../src/report/board-layout.js';
import { applyEvent, newBoard, type BoardState } from '../../src/report/board-state.js';
import { boardReporter } from '../../src/report/board.js';
import { emptyStats, type RunEvent } from '../../src/report/events.js';
import { Masker } from '../../src/core/mask.js';
import { textReporter } from '../../src/report/text.js';

// eslint-disable-next-line no-control-regex -- matching the terminal escapes the board writes
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;
const plain = (s: string): string => s.replace(ANSI, '');

function feed(b: BoardState, events: RunEvent[], t0 = 0, step = 1000): void {
  let t = t0;
  for (const e of events) applyEvent(b, e, (t += step));
}

const result = (cluster: string, task: string, status: 'ok' | 'changed' | 'failed', msg?: string): RunEvent => ({ type: 'task_result', task, module: 'debug', cluster, status, duration_ms: 1, ...(msg ? { msg } : {}) });

/** A serial: 1 window over 3 clusters: c1 done, c2 failed then rescued, c3 waiting on a rollout. */
function threeClusters(): BoardState {
  const b = newBoard(0);
  feed(b, [
    { type: 'run_start', run_id: 'r1', playbook: 'p.yml', inventory: 'inv', check: false, diff: false, time: 'now' },
    { type: 'play_start', play: 'roll', hosts: 'all', clusters: ['c1'], batch: 1, batches: 3, play_clusters: ['c1', 'c2', 'c3'] },
    { type: 'task_start', play: 'roll', task: 'apply webapp', module: 'k8s_apply', where: 'p.yml:3', handler: false },
    result('c1', 'apply webapp', 'changed'),
    { type: 'cluster_done', play: 'roll', play_index: 0, cluster: 'c1' },
    { type: 'play_start', play: 'roll', hosts: 'all', clusters: ['c2'], batch: 2, batches: 3 },
    { type: 'task_start', play: 'roll', task: 'apply webapp', module: 'k8s_apply', where: 'p.yml:3', handler: false },
    result('c2', 'apply webapp', 'failed', 'quota exceeded'),
    { type: 'task_start', play: 'roll', task: 'roll back', module: 'debug', where: 'p.yml:9', handler: false },
    result('c2', 'roll back', 'ok'),
    { type: 'cluster_done', play: 'roll', play_index: 0, cluster: 'c2' },
    { type: 'play_start', play: 'roll', hosts: 'all', clusters: ['c3'], batch: 3, batches: 3 },
    { type: 'task_start', play: 'roll', task: 'wait webapp', module: 'k8s_apply', where: 'p.yml:3', handler: false },
    { type: 'progress', cluster: 'c3', task: 'wait webapp', msg: 'Deployment webapp: 2/3 updated, 1 unavailable' },
  ]);
  return b;
}

describe('board state', () => {
  it('clusters of later batches are pending until their batch starts', () => {
    const b = newBoard(0);
    feed(b, [{ type: 'play_start', play: 'roll', hosts: 'all', clusters: ['c1'], batch: 1, batches: 3, play_clusters: ['c1', 'c2', 'c3'] }]);
    expect([...b.rows.values()].map((r) => [r.name, r.state])).toEqual([['c1', 'running'], ['c2', 'pending'], ['c3', 'pending']]);
    const lines = layoutBoard(b, { width: 80, height: 24, color: false, now: 3000 });
    expect(lines[0]).toMatch(/^batch 1\/3 · running 1 · pending 2 · /);
    expect(lines).toContain('c2      pending  b-         -'); // its batch has not started: no number yet
  });

  it('follows clusters through batches: done, failed → rescued, waiting with the readiness words', () => {
    const b = threeClusters();
    expect(b.rows.get('c1')?.state).toBe('done');
    expect(b.rows.get('c2')?.state).toBe('rescued');
    expect(b.rows.get('c3')).toMatchObject({ state: 'waiting', batch: 3, task: 'wait webapp', waiting: 'Deployment webapp: 2/3 updated, 1 unavailable' });
    expect(b.log).toEqual(['changed [c1] apply webapp', 'FAILED [c2] apply webapp: quota exceeded', 'rescued [c2] roll back']);
    expect(b.batchDurations.length).toBe(2);
  });

  it('a drain task shows as draining, a failure without rescue stays failed at the recap', () => {
    const b = newBoard(0);
    feed(b, [
      { type: 'play_start', play: 'p', hosts: 'all', clusters: ['a', 'b'], batch: 1, batches: 1 },
      { type: 'task_start', play: 'p', task: 'switch', module: 'lb_switch', where: 'x', handler: false },
    ]);
    expect(b.rows.get('a')?.state).toBe('draining');
    feed(b, [
      result('a', 'switch', 'failed', 'boom'),
      { type: 'recap', clusters: { a: { ...emptyStats(), failed: 1 }, b: { ...emptyStats(), ok: 1 } }, elapsed_ms: 5, exit_code: 2, interrupted: false },
    ]);
    expect(b.rows.get('a')?.state).toBe('failed');
    expect(b.rows.get('b')?.state).toBe('done');
  });
});

describe('board layout', () => {
  it('3 clusters at 80 columns: header with batch, counts, ETA; one row each; the log below', () => {
    const lines = layoutBoard(threeClusters(), { width: 80, height: 24, color: false, now: 20_000 });
    expect(lines[0]).toMatch(/^batch 3\/3 · waiting 1 · done 1 · rescued 1 · 19\.0s · ETA 0\.0s$/);
    expect(lines[1]).toBe('PLAY [roll]');
    expect(lines.find((l) => l.startsWith('c1 '))).toMatch(/^c1 +done +b1 /);
    expect(lines.find((l) => l.startsWith('c2 '))).toMatch(/^c2 +rescued +b2 /);
    expect(lines.find((l) => l.startsWith('c3 '))).toMatch(/^c3 +waiting +b3 +\d+\.\ds Deployment webapp: 2\/3 updated, 1 unavailable$/);
    expect(lines).toContain('FAILED [c2] apply webapp: quota exceeded');
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(80);
    expect(lines.join('')).not.toMatch(ANSI);
  });

  it('truncates long names, tasks and waits to the width', () => {
    const b = newBoard(0);
    feed(b, [
      { type: 'play_start', play: 'p'.repeat(200), hosts: 'all', clusters: ['x'.repeat(60)], batch: 1, batches: 1 },
      { type: 'progress', cluster: 'x'.repeat(60), task: 't'.repeat(100), msg: 'w'.repeat(300) },
    ]);
    const lines = layoutBoard(b, { width: 80, height: 24, color: true, now: 5000 });
    for (const l of lines) expect(plain(l).length).toBeLessThanOrEqual(80);
    expect(plain(lines[2] ?? '')).toMatch(/^x{23}… waiting .*…$/);
    expect(truncate('abc\ndef', 5)).toBe('abc …');
  });

  it('300 clusters: done/pending collapse into group lines, the active ones show, capped to the height', () => {
    const b = newBoard(0);
    const names = Array.from({ length: 300 }, (_, i) => `cluster-${String(i).padStart(3, '0')}`);
    for (let batch = 0; batch < 10; batch++) {
      const cl = names.slice(batch * 30, batch * 30 + 30);
      feed(b, [{ type: 'play_start', play: 'p', hosts: 'all', clusters: cl, batch: batch + 1, batches: 10 }]);
      if (batch < 9) for (const c of cl) applyEvent(b, { type: 'cluster_done', play: 'p', play_index: 0, cluster: c }, batch * 1000 + 999);
    }
    applyEvent(b, { type: 'progress', cluster: 'cluster-275', task: 'wait', msg: 'Lease held by run 3f2a' }, 10_000);
    const lines = layoutBoard(b, { width: 80, height: 24, color: false, now: 11_000 });
    expect(lines.length).toBeLessThanOrEqual(24);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(80);
    expect(lines[0]).toMatch(/^batch 10\/10 · running 29 · waiting 1 · done 270 · /);
    expect(lines.some((l) => l.startsWith('done 270: cluster-000, cluster-001'))).toBe(true);
    expect(lines.some((l) => /^… and \d+ more active$/.test(l))).toBe(true);
    expect(lines.filter((l) => / running +b10 /.test(l)).length).toBeGreaterThan(5);
  });

  it('colour only when asked: NO_COLOR (color false) gives plain text, colour on gives escapes', () => {
    const b = threeClusters();
    expect(layoutBoard(b, { width: 80, height: 24, color: false, now: 1 }).join('\n')).not.toMatch(ANSI);
    expect(layoutBoard(b, { width: 80, height: 24, color: true, now: 1 }).join('\n')).toMatch(ANSI);
  });
});

describe('board reporter', () => {
  it('redraws in place, hides then shows the cursor, prints the recap exactly as the text reporter', () => {
    let out = '';
    let t = 0;
    let resize: (() => void) | undefined;
    const r = boardReporter({ write: (s) => (out += s), color: false, verbosity: 0, diff: false, tty: true, now: () => (t += 10), size: () => ({ columns: 80, rows: 24 }), onResize: (f) => ((resize = f), () => (resize = undefined)), throttleMs: 0 });
    const recap: RunEvent = { type: 'recap', clusters: { c1: { ...emptyStats(), changed: 1 } }, elapsed_ms: 1200, exit_code: 0, interrupted: false };
    r.handle({ type: 'play_start', play: 'p', hosts: 'all', clusters: ['c1'], batch: 1, batches: 1 });
    resize?.();
    expect(out).toContain('\x1b[?25l');
    expect(plain(out)).toContain('c1 ');
    r.handle(result('c1', 't', 'changed'));
    r.handle(recap);
    r.close();
    expect(resize).toBeUndefined();
    expect(out).toContain('\x1b[?25h');
    let text = '';
    textReporter({ write: (s) => (text += s), color: false, verbosity: 0, diff: false, tty: false }).handle(recap);
    expect(out.endsWith(text)).toBe(true);
  });

  it('shows only masked text: events carry masked strings and the board adds nothing of its own', () => {
    const m = new Masker();
    m.add('s3cr3t-token-value');
    const b = newBoard(0);
    feed(b, [
      { type: 'play_start', play: 'p', hosts: 'all', clusters: ['c1'], batch: 1, batches: 1 },
      { type: 'progress', cluster: 'c1', task: 't', msg: m.mask('waiting for s3cr3t-token-value') },
      result('c1', 't', 'failed', m.mask('bad token s3cr3t-token-value')),
    ]);
    const text = layoutBoard(b, { width: 200, height: 40, color: false, now: 1 }).join('\n');
    expect(text).not.toContain('s3cr3t-token-value');
    expect(text).toContain('bad token');
  });
});
