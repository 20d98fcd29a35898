// The live board (`kplay run`, default on a terminal) in a REAL terminal: tmux (its own socket,
// never the user's sessions) runs a window over the 3 sandbox clusters, serial: 1, with a wait on
// an object the test creates (the set point: no fixed sleep) and one failure handled by rescue.
// `capture-pane` snapshots are asserted: rows, states, what it waits on, the final recap.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kplayBin, repoRoot } from '../helpers/cli.js';
import { startExporter, startPrometheus, waitForQuery } from '../helpers/prometheus.mjs';
import { kubectl, sandboxEnv } from '../sandbox/env.js';

const suffix = Math.random().toString(16).slice(2, 8);
const ns = `board-${suffix}`;
const socket = `kplay-board-test-${suffix}`;
const session = 'board';
let tmp: string;

const tmux = (...args: string[]): string => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
const capture = (target = session): string => tmux('capture-pane', '-p', '-J', '-t', target);

/** Poll the pane until `pred` holds (generous overall timeout, no fixed sleeps). */
async function until(pred: (screen: string) => boolean, what: string, timeoutMs = 120_000, target = session): Promise<string> {
  const end = Date.now() + timeoutMs;
  let screen = '';
  while (Date.now() < end) {
    screen = capture(target);
    if (pred(screen)) return screen;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}; screen:\n${screen}`);
}

beforeAll(async () => {
  const env = sandboxEnv();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-board-'));
  for (const ctx of ['sandbox-1', 'sandbox-2', 'sandbox-3']) await kubectl(['create', 'namespace', ns], { context: ctx, check: false });
  writeFileSync(path.join(tmp, 'inventory.yml'), [
    'all:',
    '  clusters:',
    ...['sandbox-1', 'sandbox-2', 'sandbox-3'].flatMap((c) => [`    ${c}:`, `      context: ${c}`, `      kubeconfig: ${env.kubeconfig}`]),
  ].join('\n'));
  writeFileSync(path.join(tmp, 'window.yml'), [
    '- name: window',
    '  hosts: all',
    '  serial: 1',
    '  tasks:',
    '    - name: wait for the go signal',
    `      wait_for: { kind: ConfigMap, name: "{{ wait_name | default('go') }}", namespace: ${ns}, timeout: 300 }`,
    '      when: inventory_hostname == "sandbox-1"',
    '    - block:',
    '        - name: risky step',
    '          fail: { msg: "the canary said no" }',
    '          when: inventory_hostname == "sandbox-2"',
    '      rescue:',
    '        - name: roll back',
    '          debug: { msg: rolled back }',
    '    - name: mark done',
    `      k8s_apply: { definition: { apiVersion: v1, kind: ConfigMap, metadata: { name: done, namespace: ${ns} }, data: { a: "1" } } }`,
  ].join('\n'));
  tmux('new-session', '-d', '-s', session, '-x', '80', '-y', '24', '-c', tmp);
});

afterAll(async () => {
  try {
    tmux('kill-server');
  } catch {
    // already gone
  }
  for (const ctx of ['sandbox-1', 'sandbox-2', 'sandbox-3']) await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context: ctx, check: false });
  rmSync(tmp, { recursive: true, force: true });
});

describe('live board in tmux', () => {
  it('shows the waiting cluster in the readiness words, the rescue, and the recap as the text reporter', async () => {
    const cmd = `NO_COLOR=1 node ${kplayBin} run window.yml -i inventory.yml --no-lock --record-dir ${path.join(tmp, 'runs')}; echo EXIT=$?`;
    tmux('send-keys', '-t', session, cmd, 'Enter');
    // set point 1: sandbox-1 waits on the ConfigMap, in the readiness check's words
    const waiting = await until((s) => /sandbox-1 +waiting +b1 .*ConfigMap/.test(s), 'sandbox-1 waiting on the ConfigMap');
    expect(waiting).toMatch(/^batch 1\/3 · waiting 1 · pending 2 · /m);
    expect(waiting).toMatch(/^sandbox-2 +pending /m);
    expect(waiting).toMatch(/^sandbox-3 +pending /m);
    // the wait goes on for a few seconds: the row is redrawn with the readiness check's elapsed count
    await until((s) => /sandbox-1 +waiting +b1 .*ConfigMap .*go: not found, [2-9]s/.test(s), 'the wait to reach 2 s');
    expect(waiting).toMatch(/sandbox-1 +waiting +b1 +\S+ .*ConfigMap .*go/);
    const waitingShot = waiting.slice(waiting.search(/^batch /m)).trimEnd();
    for (const l of waitingShot.split('\n')) expect(l.length).toBeLessThanOrEqual(80);
    await kubectl(['create', 'configmap', 'go', '-n', ns], { context: 'sandbox-1' });
    // set point 2: the end
    const end = await until((s) => /EXIT=\d+/.test(s), 'the run to end');
    expect(end).toMatch(/EXIT=0/);
    expect(end).toMatch(/sandbox-1 +done +b1 /);
    expect(end).toMatch(/sandbox-2 +rescued +b2 /);
    expect(end).toMatch(/sandbox-3 +done +b3 /);
    expect(end).toContain('FAILED [sandbox-2] risky step: the canary said no');
    expect(end).toContain('PLAY RECAP');
    expect(end).toMatch(/sandbox-2 +: ok=\d+ +changed=\d+ +unreachable=0 +failed=0 +skipped=\d+ +rescued=1 +ignored=0/);
    expect(end).toMatch(/elapsed [\d.]+s, exit code 0/);
    mkdirSync(path.join(repoRoot, 'docs'), { recursive: true });
    writeFileSync(path.join(repoRoot, 'docs/board-screenshot.txt'), `${waitingShot}\n\n# …at the end:\n\n${end.slice(end.search(/^batch /m), end.search(/^EXIT=/m)).trimEnd()}\n`);
  }, 200_000);

  it('Ctrl-C while a cluster waits: the final board and the recap stay on screen, the cursor is back, exit 130', async () => {
    tmux('send-keys', '-t', session, 'clear', 'Enter');
    await until((s) => !s.includes('PLAY RECAP'), 'the screen to clear');
    const cmd = `NO_COLOR=1 node ${kplayBin} run window.yml -i inventory.yml --no-lock --record-dir ${path.join(tmp, 'runs')} --limit sandbox-1 -e '{"wait_name": "never"}'; echo EXIT=$?`;
    tmux('send-keys', '-t', session, cmd, 'Enter');
    await until((s) => /sandbox-1 +waiting +b1 .*ConfigMap .*never/.test(s), 'sandbox-1 waiting on the ConfigMap never');
    expect(tmux('display', '-p', '-t', session, '#{cursor_flag}').trim()).toBe('0'); // the board hides the cursor
    tmux('send-keys', '-t', session, 'C-c');
    const end = await until((s) => /EXIT=\d+/.test(s), 'the interrupted run to end');
    expect(end).toMatch(/EXIT=130/);
    expect(end).toContain('SIGINT received: stopping');
    expect(end).toMatch(/^batch 1\/1 · failed 1 · /m);
    expect(end).toMatch(/interrupted — elapsed [\d.]+s, exit code 130/);
    expect(end.match(/^batch /gm)).toHaveLength(1); // no stale copy of the board above
    expect(tmux('display', '-p', '-t', session, '#{cursor_flag}').trim()).toBe('1');
  }, 200_000);

  it('an analysis gate on a real Prometheus: the row says what the gate measured so far; its failure ends the run', async () => {
    const exporter = await startExporter(0.004);
    const prom = await startPrometheus({ 'sandbox-1': new URL(exporter.server.url).host });
    try {
      await waitForQuery(prom.url, 'app_error_ratio', (v) => v[0] === 0.004);
      writeFileSync(path.join(tmp, 'gate.yml'), [
        '- name: gated',
        '  hosts: sandbox-1',
        '  tasks:',
        '    - name: gate',
        '      analysis:',
        '        interval: 0.5',
        '        count: 600',
        '        metrics:',
        '          - name: error-ratio',
        `            prometheus: { address: "${prom.url}", query: app_error_ratio }`,
        '            success_condition: result < 0.01',
      ].join('\n'));
      // its own, wider window: the gate's line is longer than 80 columns leave after the row's head
      tmux('new-session', '-d', '-s', 'gate', '-x', '120', '-y', '24', '-c', tmp);
      tmux('send-keys', '-t', 'gate', `NO_COLOR=1 node ${kplayBin} run gate.yml -i inventory.yml --no-lock --record-dir ${path.join(tmp, 'runs')}; echo EXIT=$?`, 'Enter');
      // set point: a few measurements taken, all good (the row is redrawn as they come)
      const running = await until((s) => /sandbox-1 +waiting +b1 .*gate › analysis error-ratio: [3-9]\/600 measured, 0 failed, last 0\.004/.test(s), 'the gate to report 3 measurements', 120_000, 'gate');
      expect(running).toMatch(/^batch 1\/1 · waiting 1 · /m);
      // the release goes bad: the next measurement fails the gate and the run ends
      exporter.ratios.set('a', 0.5);
      const end = await until((s) => /EXIT=\d+/.test(s), 'the run to end', 120_000, 'gate');
      expect(end).toMatch(/EXIT=2/);
      expect(end).toMatch(/sandbox-1 +failed +b1 /);
      expect(end).toMatch(/FAILED \[sandbox-1\] gate: analysis failed after \d+ measurement\(s\) \(error-ratio: 1 failed measurement\(s\) exceed failure_l/); // the log line is cut to the width
    } finally {
      await prom.stop();
      await exporter.server.close();
    }
  }, 200_000);
});
