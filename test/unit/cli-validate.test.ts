// Static errors: one clear error with file:line:col, exit 1, before any cluster is contacted.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { kplay, repoRoot } from '../helpers/cli.js';

const fx = (f: string): string => path.join(repoRoot, 'test/fixtures/engine', f);
const inv = fx('inv.yml');

describe('kplay validate / run: static errors', () => {
  it('accepts a good playbook', async () => {
    const r = await kplay(['validate', fx('blocks.yml'), '-i', inv]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('OK');
  });

  it.each([
    ['bad-unknown-module.yml', /bad-unknown-module\.yml:7:7: unknown module or keyword 'debgu'[^]*did you mean: debug/],
    ['bad-arg.yml', /bad-arg\.yml:7:9: pause: unknown key 'secnds'/],
  ])('%s → exit 1 with file:line:col', async (file, re) => {
    for (const cmd of [['validate', fx(file)], ['run', fx(file), '-i', inv]]) {
      const r = await kplay(cmd);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(re);
      expect(r.stdout).not.toContain('PLAY [');
    }
  });

  it('a template error in a task\'s arguments: validate warns, run fails the task when it runs, as ansible-core raises it then (#49)', async () => {
    const v = await kplay(['validate', fx('bad-template.yml'), '-i', inv]);
    expect(v.stderr).toMatch(/WARNING: .*bad-template\.yml:6:9: template error in "{{ foo \| nosuchfilter }}": no filter named 'nosuchfilter' \(the task fails when it runs/);
    expect(v.code).toBe(0);
    const r = await kplay(['run', fx('bad-template.yml'), '-i', inv]);
    expect(r.stdout).toContain('PLAY [');
    expect(r.stdout + r.stderr).toMatch(/FAILED! => .*bad-template\.yml:6:9: template error in "{{ foo \| nosuchfilter }}": no filter named 'nosuchfilter'/);
    expect(r.code).toBe(2);
  });

  it('a duplicate key warns as ansible-core does and keeps the last value (#49)', async () => {
    for (const cmd of [['validate', fx('bad-dup.yml'), '-i', inv], ['run', fx('bad-dup.yml'), '-i', inv]]) {
      const r = await kplay(cmd);
      expect(r.stderr).toMatch(/bad-dup\.yml:3:3: Found duplicate mapping key 'hosts'\. Using last defined value only\./);
      expect(r.code).toBe(0);
    }
  });

  it('a misspelt host pattern: validate errs naming it with a suggestion; run warns as ansible-playbook and skips the play', async () => {
    const v = await kplay(['validate', fx('bad-pattern.yml'), '-i', inv]);
    expect(v.code).toBe(1);
    expect(v.stderr).toContain('prdo');
    expect(v.stderr).toContain('prod');
    const r = await kplay(['run', fx('bad-pattern.yml'), '-i', inv]);
    expect(r.stdout + r.stderr).toContain("Could not match supplied host pattern, ignoring: prdo (did you mean 'prod'?)");
    expect(r.stdout + r.stderr).toContain("play 'pattern typo': skipping: no hosts matched (hosts: prdo)");
    expect(r.code).toBe(0);
    // a run in which no play found a host says so last, loudly: it did nothing
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe("NOTHING RAN: the only play skipped — no hosts matched (check each play's hosts:, --limit and the inventory)");
  });

  it('a host pattern of a play after add_host or group_by is checked when it runs, not by validate (#49)', async () => {
    const v = await kplay(['validate', fx('add-host-later-play.yml'), '-i', inv]);
    expect(v.stderr).toBe('');
    expect(v.code).toBe(0);
    // the play before add_host is still checked
    const typo = await kplay(['validate', fx('bad-pattern.yml'), '-i', inv]);
    expect(typo.code).toBe(1);
    const r = await kplay(['run', fx('add-host-later-play.yml'), '-i', inv]);
    expect(r.stdout).toContain("ok: [canary-1] => canary-1 ['canary']");
    expect(r.stdout + r.stderr).toContain('Could not match supplied host pattern, ignoring: prdo');
    expect(r.code).toBe(0);
  });

  it('a missing playbook is a clear error; a missing inventory a warning, as ansible-playbook says it', async () => {
    const r = await kplay(['run', fx('nope.yml'), '-i', inv]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('nope.yml: file not found');
    // ansible-playbook: the source is unparsed, only the implicit localhost is there (its plays on other hosts match nothing)
    const r2 = await kplay(['run', fx('blocks.yml'), '-i', 'no-such-inventory']);
    expect(r2.stderr).toMatch(/WARNING: Unable to parse \S*no-such-inventory as an inventory source/);
    expect(r2.stderr).toContain('No inventory was parsed, only implicit localhost is available');
    expect(r2.stdout).toContain('NOTHING RAN');
    expect(r2.code).toBe(0);
  });

  it('unknown options are usage errors (exit 1)', async () => {
    const r = await kplay(['run', fx('blocks.yml'), '--frobnicate']);
    expect(r.code).toBe(1);
  });
});

describe('kplay modules / inventory', () => {
  it('lists modules and documents one from its schema', async () => {
    const list = await kplay(['modules']);
    expect(list.code).toBe(0);
    for (const m of ['assert', 'command', 'debug', 'fail', 'pause', 'set_fact']) expect(list.stdout).toMatch(new RegExp(`^${m}\\s`, 'm'));
    const doc = await kplay(['modules', 'command']);
    expect(doc.code).toBe(0);
    expect(doc.stdout).toContain('| `argv` | list of string |');
    expect(doc.stdout).toContain('```yaml');
    const bad = await kplay(['modules', 'comand']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('did you mean: command');
  });

  it('shows the group graph and resolved vars with secrets masked', async () => {
    const g = await kplay(['inventory', '-i', inv, '--graph']);
    expect(g.code).toBe(0);
    expect(g.stdout).toContain('@prod:');
    expect(g.stdout).toContain('prod-4');
    const c = await kplay(['inventory', '-i', inv, '--cluster', 'prod-1']);
    expect(c.code).toBe(0);
    expect(c.stdout).toContain('where: prod-1-cluster');
    expect(c.stdout).not.toContain('CANARY');
    const l = await kplay(['inventory', '-i', inv, '--list']);
    const parsed = JSON.parse(l.stdout) as { clusters: Record<string, { vars: Record<string, unknown> }> };
    expect(parsed.clusters['stg-1']?.vars.replicas).toBe(1);
    expect(l.stdout).not.toContain('CANARY');
  });
});
