// CLI tests: spawn the built `kplay` on fixture playbooks and assert output, JSON events and
// exit codes. These need no cluster: they use utility modules only.
import { mkdtempSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonEvents, kplay, repoRoot } from '../helpers/cli.js';

const fx = (f: string): string => path.join(repoRoot, 'test/fixtures/engine', f);
const inv = fx('inv.yml');
const run = (pb: string, ...args: string[]) => kplay(['run', fx(pb), '-i', inv, ...args]);

type Ev = Record<string, unknown>;
const results = (events: Ev[], task?: string): Ev[] => events.filter((e) => e.type === 'task_result' && (!task || e.task === task));
const recap = (events: Ev[]): { clusters: Record<string, Record<string, number>>; exit_code: number } => {
  const r = events.find((e) => e.type === 'recap');
  if (!r) throw new Error('no recap event');
  return r as unknown as { clusters: Record<string, Record<string, number>>; exit_code: number };
};

describe('kplay run: batches and failure thresholds', () => {
  it('runs serial batches [1, 50%] in order', async () => {
    const r = await run('serial.yml', '-o', 'json');
    expect(r.code).toBe(0);
    const ev = jsonEvents(r.stdout);
    const plays = ev.filter((e) => e.type === 'play_start').map((e) => e.clusters);
    expect(plays).toEqual([['prod-1'], ['prod-2', 'prod-3'], ['prod-4']]);
  });

  it('max_fail_percentage 0 stops the run after the failing batch; later clusters untouched', async () => {
    const r = await run('serial.yml', '-e', 'fail_on=prod-2');
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('fatal: [prod-2]: FAILED! => broken prod-2');
    expect(r.stdout).toContain('max_fail_percentage 0% exceeded');
    expect(r.stdout).not.toContain('prod-4');
    // prod-3 was in the same batch and finished the failing task, but not the next one.
    expect(r.stdout).not.toContain('after on prod-3');
    expect(r.stdout).toMatch(/prod-2\s+: ok=0\s+changed=0\s+unreachable=0\s+failed=1/);
  });
});

describe('kplay run: block / rescue / always', () => {
  it('rescues a failure and runs always on every cluster', async () => {
    const r = await run('blocks.yml', '-o', 'json');
    expect(r.code).toBe(0);
    const ev = jsonEvents(r.stdout);
    expect(results(ev, 'step three').map((e) => e.cluster)).toEqual(['prod-1']);
    const rescue = results(ev, 'recover');
    expect(rescue).toHaveLength(1);
    expect(rescue[0]?.msg).toBe('rescued explode: exploded on prod-2');
    expect(results(ev, 'cleanup').map((e) => e.cluster).sort()).toEqual(['prod-1', 'prod-2']);
    expect(results(ev, 'final').map((e) => e.cluster).sort()).toEqual(['prod-1', 'prod-2']);
    const rc = recap(ev);
    expect(rc.clusters['prod-2']).toMatchObject({ failed: 0, rescued: 1 });
  });

  it('a failing rescue fails the cluster once; always still runs; the cluster leaves the play', async () => {
    const r = await run('blocks.yml', '-o', 'json', '-e', 'rescue_fails=true');
    expect(r.code).toBe(2);
    const ev = jsonEvents(r.stdout);
    expect(results(ev, 'cleanup').map((e) => e.cluster).sort()).toEqual(['prod-1', 'prod-2']);
    expect(results(ev, 'final').map((e) => e.cluster)).toEqual(['prod-1']);
    // as ansible-core counts it: rescued when the rescue starts, failed by the rescue's failure (test/parity/cases/rescue-fails.yml)
    expect(recap(ev).clusters['prod-2']).toMatchObject({ failed: 1, rescued: 1 });
  });
});

describe('kplay run: loops, register, until/retries, set_fact', () => {
  it('loops with index_var and registers per-item results; until retries until the condition holds', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-loop-'));
    const r = await run('loops.yml', '-o', 'json', '-e', `counter=${path.join(dir, 'n')}`);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const ev = jsonEvents(r.stdout);
    expect(results(ev, 'echo items').filter((e) => e.item !== undefined).map((e) => e.item)).toEqual(['a', 'b', 'c']);
    expect(results(ev, 'show results')[0]?.status).toBe('ok');
    expect(ev.filter((e) => e.type === 'retry' && e.task === 'retry until third attempt')).toHaveLength(2);
    expect(readFileSync(path.join(dir, 'n'), 'utf8').trim()).toBe('3');
    expect(results(ev, 'record attempts')[0]?.msg).toBe('attempts=3');
    const never = results(ev, 'never succeeds')[0];
    expect(never).toMatchObject({ status: 'failed', ignored: true });
    expect(String(never?.msg)).toContain('until condition not met after 2 attempt(s)'); // retries: 1 = one attempt after the first, as in ansible-core 2.19
    expect(results(ev, 'fact visible')[0]?.msg).toBe('computed=staging-2');
    expect(recap(ev).clusters['stg-1']).toMatchObject({ ignored: 1, failed: 0 });
  });
});

describe('kplay run: handlers', () => {
  it('runs notified handlers (by name and listen topic) only where something changed, at flush_handlers', async () => {
    const r = await run('handlers.yml', '-o', 'json');
    expect(r.code).toBe(0);
    const ev = jsonEvents(r.stdout);
    const order = ev.filter((e) => e.type === 'task_start').map((e) => e.task);
    expect(order).toEqual(['change on staging only', 'restart app', 'listener', 'after flush']);
    expect(results(ev, 'restart app').map((e) => e.cluster)).toEqual(['stg-1']);
    expect(results(ev, 'listener').map((e) => e.cluster)).toEqual(['stg-1']);
  });
});

describe('kplay run: tags, limit, start-at-task', () => {
  const ran = async (...args: string[]): Promise<string[]> => {
    const r = await run('tags.yml', '-o', 'json', ...args);
    expect(r.code).toBe(0);
    return results(jsonEvents(r.stdout)).map((e) => String(e.msg));
  };
  it('selects by --tags and --skip-tags, honouring always and never', async () => {
    expect(await ran()).toEqual(['A', 'B', 'U', 'ALWAYS']);
    expect(await ran('--tags', 'a')).toEqual(['A', 'ALWAYS']);
    expect(await ran('--tags', 'a,b', '--skip-tags', 'always')).toEqual(['A', 'B']);
    expect(await ran('--skip-tags', 'b')).toEqual(['A', 'U', 'ALWAYS']);
    expect(await ran('--tags', 'debugonly')).toEqual(['ALWAYS', 'NEVER']);
    // Play tags are inherited: every task of this play is tagged.
    expect(await ran('--tags', 'untagged')).toEqual(['ALWAYS']);
    // Like Ansible, `never` yields to any explicitly requested tag of the task, inherited ones included.
    expect(await ran('--tags', 'play')).toEqual(['A', 'B', 'U', 'ALWAYS', 'NEVER']);
  });
  it('--start-at-task skips earlier tasks', async () => {
    expect(await ran('--start-at-task', 'untag*')).toEqual(['U', 'ALWAYS']);
  });
  it('--limit narrows the clusters; an empty or misspelt limit is an error naming it', async () => {
    const r = await run('precedence.yml', '-o', 'json', '--limit', 'stg-*');
    expect(r.code).toBe(0);
    expect([...new Set(results(jsonEvents(r.stdout)).map((e) => e.cluster))]).toEqual(['stg-1']);
    const bad = await run('precedence.yml', '--limit', 'prdo-1');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('prdo-1');
    expect(bad.stderr).toContain('prod-1');
  });
});

describe('kplay run: variables', () => {
  it('applies precedence: cluster > child group > all; task vars > play vars; -e beats everything', async () => {
    const r = await run('precedence.yml', '-o', 'json');
    const ev = jsonEvents(r.stdout);
    const msgs = Object.fromEntries(results(ev, 'show where').map((e) => [e.cluster, e.msg]));
    expect(msgs).toEqual({ 'prod-1': 'where=prod-1-cluster team=platform', 'stg-1': 'where=staging team=platform' });
    expect(results(ev, 'task vars beat play vars').map((e) => e.msg)).toEqual(['x=task', 'x=task']);
    const r2 = await run('precedence.yml', '-o', 'json', '-e', 'where=cli x=cli', '-e', '{team: extra}');
    const ev2 = jsonEvents(r2.stdout);
    expect(results(ev2, 'show where').map((e) => e.msg)).toEqual(['where=cli team=extra', 'where=cli team=extra']);
    expect(results(ev2, 'task vars beat play vars').map((e) => e.msg)).toEqual(['x=cli', 'x=cli']);
  });

  it('-e @file.yml loads variables from a file', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-e-'));
    writeFileSync(path.join(dir, 'vars.yml'), 'where: from-file\n');
    const r = await run('precedence.yml', '-o', 'json', '-e', `@${path.join(dir, 'vars.yml')}`);
    expect(results(jsonEvents(r.stdout), 'show where').map((e) => e.msg)).toEqual(['where=from-file team=platform', 'where=from-file team=platform']);
  });

  it('an undefined variable fails the task naming the variable, the task position and the cluster', async () => {
    const r = await run('bad-undefined.yml');
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('fatal: [stg-1]');
    expect(r.stdout).toContain('not_defined_anywhere');
    expect(r.stdout).toMatch(/bad-undefined\.yml:\d+:\d+/);
  });
});

describe('kplay run: Liquid forms of older kplay playbooks', () => {
  it('reads size/first/last and contains where Jinja has no value, and keeps every value Jinja has', async () => {
    const r = await run('liquid-forms.yml', '-o', 'json');
    const ev = jsonEvents(r.stdout);
    const msg = (task: string): unknown => results(ev, task)[0]?.msg;
    expect(msg('four prod clusters')).toBe('four');
    expect(results(ev, 'not five')[0]).toMatchObject({ status: 'skipped' });
    expect(msg('properties')).toBe('4 prod-1 prod-4 12 2');
    expect(msg('keys win')).toBe('large one omega');
    expect(msg('jinja values kept')).toBe('none False');
    expect(results(ev, 'contains')[0]).toMatchObject({ status: 'ok' });
    expect(results(ev, 'undefined still fails')[0]).toMatchObject({ status: 'failed' });
    expect(String(results(ev, 'undefined still fails')[0]?.msg)).toContain("'missing_list' is undefined");
    expect(recap(ev).clusters['stg-1']).toMatchObject({ failed: 0, ignored: 1 });
    expect(r.code).toBe(0);
  });
});

describe('kplay run: includes and imports', () => {
  it('imports statically and includes dynamically with loop vars', async () => {
    const r = await run('include.yml', '-o', 'json');
    expect(r.code).toBe(0);
    const msgs = results(jsonEvents(r.stdout), 'included step').map((e) => e.msg);
    expect(msgs).toEqual(['step imported on stg-1', 'step included-1 on stg-1', 'step included-2 on stg-1']);
  });
});

describe('kplay run: check mode', () => {
  it('changes nothing under --check, but check_mode: false tasks still run', async () => {
    const marker = path.join(mkdtempSync(path.join(os.tmpdir(), 'kplay-check-')), 'marker');
    const r = await run('check.yml', '--check', '-o', 'json', '-e', `marker=${marker}`);
    expect(r.code).toBe(0);
    expect(existsSync(marker)).toBe(false);
    const ev = jsonEvents(r.stdout);
    expect(results(ev, 'run a command')[0]?.status).toBe('skipped');
    expect(results(ev, 'mode var')[0]?.msg).toBe('check_mode=True forced=forced');
    const real = await run('check.yml', '-o', 'json', '-e', `marker=${marker}`);
    expect(real.code).toBe(0);
    expect(existsSync(marker)).toBe(true);
  });
});

describe('kplay run: secrets never appear in output', () => {
  it('masks !secret values and secret-looking vars in text, -vv and JSON output', async () => {
    for (const args of [['-vv'], ['-o', 'json', '-vv'], ['--diff', '-v']]) {
      const r = await run('secrets.yml', ...args);
      expect(r.code).toBe(0);
      const all = r.stdout + r.stderr;
      expect(all).not.toContain('CANARY');
      expect(all).not.toContain(Buffer.from('pw-CANARY-8080').toString('base64'));
      expect(all).toContain('********');
    }
  });
});

describe('kplay run: Ctrl-C', () => {
  it('stops running steps, prints the recap and exits 130', async () => {
    const started = Date.now();
    const r = await kplay(['run', fx('slow.yml'), '-i', inv], {
      onSpawn: (child) => {
        let seen = '';
        child.stdout?.on('data', (d: Buffer) => {
          seen += d.toString();
          if (seen.includes('TASK [wait a long time]')) setTimeout(() => child.kill('SIGINT'), 300);
        });
      },
    });
    expect(r.code).toBe(130);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(r.stdout).toContain('PLAY RECAP');
    expect(r.stdout).not.toContain('never reached');
    expect(r.stdout).not.toContain('PLAY ABORTED');
    expect(r.stderr).toContain('SIGINT received');
  });
});

describe('kplay run: any_errors_fatal and timeout', () => {
  it('any_errors_fatal stops every cluster and the following plays', async () => {
    const r = await run('fatal.yml', '-o', 'json');
    expect(r.code).toBe(2);
    const ev = jsonEvents(r.stdout);
    expect(results(ev, 'next')).toHaveLength(0);
    expect(r.stdout).not.toContain('second play ran');
    expect(ev.some((e) => e.type === 'play_aborted' && String(e.reason).includes('any_errors_fatal'))).toBe(true);
  });

  it('task timeout cancels the module and fails the task', async () => {
    const started = Date.now();
    const r = await run('timeout.yml');
    expect(r.code).toBe(2);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(r.stdout).toMatch(/fatal: \[stg-1\]: FAILED! => .*(timed out after 1s|cancelled)/);
    expect(r.stdout).not.toContain('not reached');
  });
});

describe('module registry: community modules', () => {
  const cdir = (p: string): string => fx(path.join('community', p));
  it('loads --module-path modules and documents them', async () => {
    const r = await kplay(['run', cdir('uses-shout.yml'), '-i', inv, '-M', cdir('good'), '-o', 'json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(results(jsonEvents(r.stdout), 'use it')[0]?.msg).toBe('HI STG-1');
    const doc = await kplay(['modules', 'shout', '-M', cdir('good')]);
    expect(doc.stdout).toContain('| `msg` | string | yes |');
  });
  it('loads kplay-module-* npm packages found next to the playbook', async () => {
    const r = await kplay(['run', cdir('pkg/playbook.yml'), '-i', inv]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('ok: [stg-1] => hello ops');
  });
  it('refuses a module that would replace a built-in, and a malformed one', async () => {
    const dup = await kplay(['validate', cdir('uses-shout.yml'), '-M', cdir('good'), '-M', cdir('dup')]);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/module 'debug' is defined twice/);
    const bad = await kplay(['validate', cdir('uses-shout.yml'), '-M', cdir('malformed')]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/malformed module in .*broken\.mjs: `run\(args, ctx\)` must be a function/);
  });
  it('names the module file that throws while it loads', async () => {
    const r = await kplay(['validate', cdir('uses-shout.yml'), '-M', cdir('good'), '-M', cdir('throws')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot load module .*throws\/boom\.mjs: boom: KPLAY_BOOM_CONFIG is not set/);
  });
  it('a playbook using an unknown module fails validation without the module path', async () => {
    const r = await kplay(['validate', cdir('uses-shout.yml')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("unknown module or keyword 'shout'");
  });
});
