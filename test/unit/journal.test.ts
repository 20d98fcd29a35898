// The resume journal and per-task resume, in process on the implicit localhost: a run is stopped
// (its signal aborted when a task that blocks on a file starts, as Ctrl-C does; or its journal cut
// right after a task's `start` line, as `kill -9` leaves it), then resumed from its journal.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdsSecret, journalTask, parseJournal, readJournal, type JournalState } from '../../src/audit/journal.js';
import { runManaged } from '../../src/run/managed-run.js';
import { changedFiles, playbookDigests, Resume, safeToRunAgain, TaskKeys, taskBase, unrestorable } from '../../src/executor/resume.js';
import { loadInventory } from '../../src/inventory/resolve.js';
import type { Inventory } from '../../src/inventory/types.js';
import { loadPlaybook } from '../../src/playbook/parse.js';
import type { RunEvent } from '../../src/report/events.js';
import { Masker } from '../../src/core/mask.js';
import { loadRegistry, type ModuleRegistry } from '../../src/plugins/registry.js';

const FIX = fileURLToPath(new URL('../fixtures/inventory/', import.meta.url));
const root = mkdtempSync(path.join(tmpdir(), 'kplay-journal-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let registry: ModuleRegistry;
let inv: Inventory;
beforeAll(async () => {
  registry = await loadRegistry({});
  inv = await loadInventory('example.yml', { cwd: FIX, env: { HOME: '/home/tester' } });
});

type Obj = Record<string, unknown>;
const lines = (file: string): string[] => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

/** One scenario: its own directory, playbook and record dir. */
function scenario(name: string, yaml: string): { dir: string; pb: string; records: string; out: string; gate: string } {
  const dir = mkdtempSync(path.join(root, `${name}-`));
  const pb = path.join(dir, 'site.yml');
  writeFileSync(pb, yaml.replaceAll('OUT', path.join(dir, 'out.txt')).replaceAll('GATE', path.join(dir, 'gate')));
  return { dir, pb, records: path.join(dir, 'records'), out: path.join(dir, 'out.txt'), gate: path.join(dir, 'gate') };
}

/** Run the playbook; `stopAt`: abort the run (Ctrl-C) as soon as this task starts. */
async function run(s: { pb: string; records: string }, o: { stopAt?: string; resume?: JournalState; extraVars?: Obj; secrets?: string[] } = {}): Promise<{ code: number; events: RunEvent[]; runId: string }> {
  const playbook = await loadPlaybook(s.pb, { registry });
  const masker = new Masker();
  for (const v of o.secrets ?? []) masker.add(v);
  const ac = new AbortController();
  const events: RunEvent[] = [];
  const { summary } = await runManaged({
    playbook,
    inventory: inv,
    registry,
    extraVars: o.extraVars ?? {},
    masker,
    lock: false,
    recordDir: s.records,
    resume: o.resume,
    signal: ac.signal,
    onEvent: (e) => {
      events.push(e);
      if (o.stopAt && e.type === 'task_start' && e.task === o.stopAt) setImmediate(() => ac.abort());
    },
  });
  const start = events.find((e) => e.type === 'run_start');
  return { code: summary.exitCode, events, runId: start?.type === 'run_start' ? start.run_id : '' };
}

const results = (events: RunEvent[], task: string): Extract<RunEvent, { type: 'task_result' }>[] => events.filter((e): e is Extract<RunEvent, { type: 'task_result' }> => e.type === 'task_result' && e.task === task);
const journalOf = (records: string, runId: string): string => path.join(records, `${runId}.journal`);

const APPEND = `- hosts: localhost
  gather_facts: false
  tasks:
    - name: append
      command: sh -c 'echo first >> OUT; wc -l < OUT'
      register: appended
    - name: remember
      set_fact:
        count_then: "{{ appended.stdout | trim }}"
    - name: gate
      wait_for: { path: GATE, timeout: 60 }
    - name: after
      command: sh -c 'echo "after {{ count_then }} {{ appended.rc }}" >> OUT'
`;

describe('per-task resume', () => {
  it('Ctrl-C in a task: finished tasks are not run again, their registered results and facts are restored, the interrupted task runs again', async () => {
    const s = scenario('ctrlc', APPEND);
    const r1 = await run(s, { stopAt: 'gate' });
    expect(r1.code).toBe(130);
    expect(readFileSync(s.out, 'utf8')).toBe('first\n');
    const j = lines(journalOf(s.records, r1.runId)).map((l) => JSON.parse(l) as Obj);
    expect(j.filter((l) => l.type === 'task').map((l) => [l.task, l.status])).toEqual([
      ['append', 'changed'],
      ['remember', 'ok'],
    ]);
    // stopped in the gate: started, not finished
    expect(j.some((l) => l.type === 'start' && l.task === 'gate')).toBe(true);
    expect(j.find((l) => l.task === 'append' && l.type === 'task')?.set).toMatchObject({ appended: { rc: 0, stdout: '1', changed: true } });

    writeFileSync(s.gate, '');
    const r2 = await run(s, { resume: await readJournal(s.records, 'last') });
    expect(r2.code).toBe(0);
    // the non-idempotent step ran once; the later task saw what it registered and the fact set from it
    expect(readFileSync(s.out, 'utf8')).toBe('first\nafter 1 0\n');
    expect(results(r2.events, 'append').map((e) => [e.status, e.msg])).toEqual([['skipped', `done in run ${r1.runId} (changed)`]]);
    expect(results(r2.events, 'remember').map((e) => e.msg)).toEqual([`done in run ${r1.runId} (ok)`]);
    expect(results(r2.events, 'gate').map((e) => e.status)).toEqual(['ok']);
    expect(r2.events.some((e) => e.type === 'warning' && e.msg === `task 'gate' was interrupted in run ${r1.runId} before it finished: running it again`)).toBe(true);
  });

  it('killed in a task (its start journaled, not its end): it runs again and says so; a resumed run can be resumed in turn', async () => {
    const s = scenario('kill', APPEND);
    const r1 = await run(s, { stopAt: 'gate' });
    const file = journalOf(s.records, r1.runId);
    // what kill -9 leaves: everything up to the gate's start line, and half a line
    const all = lines(file);
    const cut = all.findIndex((l) => l.includes('"type":"start"') && l.includes('"task":"gate"'));
    expect(cut).toBeGreaterThan(0);
    writeFileSync(file, `${all.slice(0, cut + 1).join('\n')}\n{"type":"task","clu`);
    const state = await readJournal(s.records, r1.runId);
    // a second interrupted resume: the gate is still closed
    const r2 = await run(s, { resume: state, stopAt: 'gate' });
    expect(r2.code).toBe(130);
    expect(r2.events.some((e) => e.type === 'warning' && e.msg === `task 'gate' was interrupted in run ${r1.runId} before it finished: running it again`)).toBe(true);
    writeFileSync(s.gate, '');
    const r3 = await run(s, { resume: await readJournal(s.records, r2.runId) });
    expect(r3.code).toBe(0);
    expect(readFileSync(s.out, 'utf8')).toBe('first\nafter 1 0\n');
    // entries carried through the second run still name the run the task ran in
    expect(results(r3.events, 'append').map((e) => e.msg)).toEqual([`done in run ${r1.runId} (changed)`]);
  });

  it('a run that failed on a task: resumed once fixed, the failed task runs again (said), the ones before it do not', async () => {
    const s = scenario(
      'failed',
      `- hosts: localhost
  gather_facts: false
  tasks:
    - name: append
      command: sh -c 'echo first >> OUT'
    - name: check
      command: test -f GATE
    - name: after
      command: sh -c 'echo after >> OUT'
`,
    );
    const r1 = await run(s);
    expect(r1.code).toBe(2);
    writeFileSync(s.gate, '');
    const r2 = await run(s, { resume: await readJournal(s.records, 'last') });
    expect(r2.code).toBe(0);
    expect(readFileSync(s.out, 'utf8')).toBe('first\nafter\n');
    expect(r2.events.some((e) => e.type === 'log' && e.task === 'check' && e.msg === `failed in run ${r1.runId}: running it again`)).toBe(true);
    expect(results(r2.events, 'check').map((e) => e.status)).toEqual(['changed']);
  });

  it('handlers notified by finished tasks still run; a failure a rescue handled is not run again, nor its rescue', async () => {
    const s = scenario(
      'handlers',
      `- hosts: localhost
  gather_facts: false
  tasks:
    - name: change
      command: sh -c 'echo change >> OUT'
      notify: restart
    - block:
        - name: breaks
          command: sh -c 'echo breaks >> OUT; exit 1'
      rescue:
        - name: repair
          command: sh -c 'echo "repair {{ ansible_failed_result.rc }}" >> OUT'
    - name: gate
      wait_for: { path: GATE, timeout: 60 }
  handlers:
    - name: restart
      command: sh -c 'echo restart >> OUT'
`,
    );
    const r1 = await run(s, { stopAt: 'gate' });
    expect(r1.code).toBe(130);
    expect(readFileSync(s.out, 'utf8')).toBe('change\nbreaks\nrepair 1\n');
    writeFileSync(s.gate, '');
    const r2 = await run(s, { resume: await readJournal(s.records, 'last') });
    expect(r2.code).toBe(0);
    expect(readFileSync(s.out, 'utf8')).toBe('change\nbreaks\nrepair 1\nrestart\n');
    expect(results(r2.events, 'breaks').map((e) => e.msg)).toEqual([`failed in run ${r1.runId} and rescued there: not run again`]);
    const recap = r2.events.find((e) => e.type === 'recap');
    expect(recap?.type === 'recap' ? recap.clusters.localhost : undefined).toMatchObject({ failed: 0, rescued: 1 });
  });

  it('include loops and a file included twice: each run of a task is its own step', async () => {
    const s = scenario(
      'loops',
      `- hosts: localhost
  gather_facts: false
  tasks:
    - include_tasks: each.yml
      loop: [a, b]
    - include_tasks: each.yml
      loop: [c]
    - name: gate
      wait_for: { path: GATE, timeout: 60 }
    - name: sum
      command: sh -c 'echo "seen {{ seen | join(",") }}" >> OUT'
`,
    );
    writeFileSync(path.join(s.dir, 'each.yml'), `- name: one
  command: sh -c 'echo {{ item }} >> ${s.out}'
- set_fact:
    seen: "{{ (seen | default([])) + [item] }}"
`);
    const r1 = await run(s, { stopAt: 'gate' });
    expect(r1.code).toBe(130);
    writeFileSync(s.gate, '');
    const r2 = await run(s, { resume: await readJournal(s.records, 'last') });
    expect(r2.code).toBe(0);
    expect(readFileSync(s.out, 'utf8')).toBe('a\nb\nc\nseen a,b,c\n');
    expect(results(r2.events, 'one').map((e) => e.status)).toEqual(['skipped', 'skipped', 'skipped']);
  });

  it('a play the cluster finished is not run again, and what it set is carried into the later plays', async () => {
    const s = scenario(
      'plays',
      `- hosts: localhost
  gather_facts: false
  tasks:
    - name: first play
      command: sh -c 'echo one >> OUT; echo v1'
      register: made
- hosts: localhost
  gather_facts: false
  tasks:
    - name: gate
      wait_for: { path: GATE, timeout: 60 }
    - name: use
      command: sh -c 'echo "use {{ made.stdout }}" >> OUT'
`,
    );
    const r1 = await run(s, { stopAt: 'gate' });
    expect(r1.code).toBe(130);
    writeFileSync(s.gate, '');
    const r2 = await run(s, { resume: await readJournal(s.records, 'last') });
    expect(r2.code).toBe(0);
    expect(readFileSync(s.out, 'utf8')).toBe('one\nuse v1\n');
    expect(results(r2.events, 'first play')).toEqual([]);
    // the resumed run's journal keeps play 1 as finished, with what it set
    const again = await readJournal(s.records, r2.runId);
    expect(new Resume(again).playDone(0, 'localhost')).toBe(true);
    expect(new Resume(again).playEntries(0, 'localhost')[0]?.set).toMatchObject({ made: { stdout: 'v1' } });
  });

  it('never writes a secret: a pure task that set one runs again; a task that changed something and registered one stops the cluster with a clear error', async () => {
    const secret = 'S3cret-Value-42';
    const s = scenario(
      'secrets',
      `- hosts: localhost
  gather_facts: false
  tasks:
    - name: derive
      set_fact:
        db_fact: "{{ db_password | upper }}"
    - name: gate
      wait_for: { path: GATE, timeout: 60 }
    - name: check
      assert:
        that: db_fact == (db_password | upper)
`,
    );
    const r1 = await run(s, { stopAt: 'gate', extraVars: { db_password: secret }, secrets: [secret] });
    expect(r1.code).toBe(130);
    const text = readFileSync(journalOf(s.records, r1.runId), 'utf8');
    expect(text).not.toContain(secret);
    expect(text).not.toContain(secret.toUpperCase());
    expect(text).toContain('"withheld":["db_fact"]');
    writeFileSync(s.gate, '');
    const r2 = await run(s, { resume: await readJournal(s.records, 'last'), extraVars: { db_password: secret }, secrets: [secret] });
    expect(r2.code).toBe(0);
    expect(results(r2.events, 'derive').map((e) => e.status)).toEqual(['ok']);
    expect(results(r2.events, 'check').map((e) => e.status)).toEqual(['ok']);

    const u = scenario(
      'secrets-cmd',
      `- hosts: localhost
  gather_facts: false
  tasks:
    - name: issue
      command: sh -c 'echo issued >> OUT; echo {{ db_password }}'
      register: issued
    - name: gate
      wait_for: { path: GATE, timeout: 60 }
`,
    );
    await run(u, { stopAt: 'gate', extraVars: { db_password: secret }, secrets: [secret] });
    writeFileSync(u.gate, '');
    const r3 = await run(u, { resume: await readJournal(u.records, 'last'), extraVars: { db_password: secret }, secrets: [secret] });
    expect(r3.code).toBe(2);
    expect(readFileSync(u.out, 'utf8')).toBe('issued\n');
    expect(results(r3.events, 'issue')[0]?.msg).toMatch(/^cannot resume: this task finished in run \S+ \(changed\), but what it set \(issued\) holds a secret, which the journal never keeps; running command again could repeat what it did/);
    expect(results(r3.events, 'gate')).toEqual([]);
  });
});

describe('journal lines', () => {
  const masker = new Masker();
  masker.add('hunter2-secret');

  it('withholds values holding a secret (registered, or under a secret-looking name) and masks the rest', () => {
    const t = journalTask(
      { cluster: 'c1', key: '0:site.yml:3:7#0', task: 'use hunter2-secret', module: 'command', status: 'changed', run: 'r1', set: { out: { stdout: 'x hunter2-secret' }, api_token: 'abc123456', plain: { a: [1, 'two'] }, nested: { client_key: 'k-1234567' } }, notified: ['h'] },
      masker,
    );
    expect(t.withheld?.sort()).toEqual(['api_token', 'nested', 'out']);
    expect(t.set).toEqual({ plain: { a: [1, 'two'] } });
    expect(t.task).toBe('use ********');
    expect(JSON.stringify(t)).not.toContain('hunter2-secret');
    expect(holdsSecret('password', '', masker)).toBe(false);
    expect(holdsSecret('enabled', true, masker)).toBe(false);
  });

  it('does not keep a value over 1 MiB as JSON: named as oversize, run again when that is harmless', () => {
    const big = { resources: Array.from({ length: 20_000 }, (_, i) => ({ name: `object-${i}`, ns: 'default', uid: `0000-${i}` })) };
    const t = journalTask({ cluster: 'c1', key: 'k#0', task: 'list', module: 'k8s_info', status: 'ok', run: 'r1', set: { listed: big, small: 1 } }, masker);
    expect(t.oversize).toEqual(['listed']);
    expect(t.set).toEqual({ small: 1 });
    expect(unrestorable(t)).toBe('what it set (listed) is too large for the journal (over 1 MiB as JSON)');
    expect(safeToRunAgain({ name: 'k8s_info', readOnly: true })).toBe(true);
    expect(safeToRunAgain({ name: 'k8s_apply', declaresState: true })).toBe(true);
    expect(safeToRunAgain({ name: 'set_fact' })).toBe(true);
    expect(safeToRunAgain({ name: 'command' })).toBe(false);
  });

  it('reads back: a line cut by a kill is left out, the last entry of a task wins, starts and rescues are kept', () => {
    const head = JSON.stringify({ type: 'journal', run_id: 'r1', playbook: '/p/site.yml', inventory: '', tags: [], skip_tags: [], extra_var_names: [], started: 'x' });
    const task = (status: string): string => JSON.stringify({ type: 'task', cluster: 'c1', key: 'k#0', task: 't', module: 'command', status, run: 'r1' });
    const st = parseJournal([head, JSON.stringify({ type: 'start', cluster: 'c1', key: 'k#0', task: 't' }), task('failed'), JSON.stringify({ type: 'rescued', cluster: 'c1', key: 'k#0' }), JSON.stringify({ type: 'start', cluster: 'c1', key: 'k#1', task: 't' }), '{"type":"task","clus'].join('\n'), 'j');
    const r = new Resume(st);
    expect(r.past('c1', 'k#0').kind).toBe('done');
    expect(r.past('c1', 'k#1').kind).toBe('interrupted');
    expect(r.past('c1', 'k#2').kind).toBe('new');
    expect(r.past('c2', 'k#0').kind).toBe('new');
    const st2 = parseJournal([head, task('failed')].join('\n'), 'j');
    expect(new Resume(st2).past('c1', 'k#0').kind).toBe('failed');
    const st3 = parseJournal([head, task('failed'), task('ok')].join('\n'), 'j');
    expect(new Resume(st3).past('c1', 'k#0').kind).toBe('done');
    // a skipped task did nothing: evaluated again
    expect(new Resume(parseJournal([head, task('skipped')].join('\n'), 'j')).past('c1', 'k#0').kind).toBe('new');
    expect(() => parseJournal('{"type":"task"}', 'j')).toThrow(/not a kplay run journal/);
  });

  it('task identities: file, line, column, and the n-th run on a cluster', () => {
    const keys = new TaskKeys();
    const base = taskBase(1, { file: '/p/roles/web/tasks/main.yml', line: 4, col: 3 }, '/p');
    expect(base).toBe('1:roles/web/tasks/main.yml:4:3');
    expect([keys.next('c1', base), keys.next('c2', base), keys.next('c1', base)]).toEqual([`${base}#0`, `${base}#0`, `${base}#1`]);
  });

  it('task file digests name what changed (secrets masked before hashing)', async () => {
    const s = scenario('digest', APPEND);
    const playbook = await loadPlaybook(s.pb, { registry });
    const before = await playbookDigests(playbook);
    expect(Object.keys(before)).toEqual(['site.yml']);
    writeFileSync(s.pb, `${readFileSync(s.pb, 'utf8')}    - debug: {msg: more}\n`);
    expect(changedFiles(before, await playbookDigests(playbook))).toEqual(['site.yml']);
    expect(changedFiles(before, before)).toEqual([]);
    expect(readdirSync(s.dir)).toContain('site.yml');
  });
});
