// Edge cases of the controller-local modules (command, shell, file, copy, template, wait_for's
// Ansible form), run as the executor runs them (arguments validated, defaults filled in).
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import command from '../../modules/command.js';
import copy from '../../modules/copy.js';
import file from '../../modules/file.js';
import shell from '../../modules/shell.js';
import template from '../../modules/template.js';
import waitFor from '../../modules/wait_for.js';
import type { ModuleContext, ModuleResult } from '../../src/core/module.js';
import { makeCtx, runModule } from '../helpers/ctx.js';
import { setVaultSecrets, vaultEncrypt } from '../../src/core/vault.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-local-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function data(r: ModuleResult): Record<string, unknown> {
  return ('data' in r && r.data) || {};
}

describe('command and shell', () => {
  it('free form, cmd and argv are mutually exclusive; one is required', async () => {
    const both = await runModule(command, { _raw_params: 'true', argv: ['true'] });
    expect(both).toMatchObject({ status: 'failed', msg: expect.stringContaining('mutually exclusive') });
    const none = await runModule(command, {});
    expect(none).toMatchObject({ status: 'failed', msg: expect.stringContaining('one of the following is required') });
  });
  it('command does not run a shell: pipes are arguments', async () => {
    const r = await runModule(command, { _raw_params: 'echo a | wc -l' });
    expect(r.status).toBe('changed');
    expect(data(r)).toMatchObject({ cmd: ['echo', 'a', '|', 'wc', '-l'], stdout: 'a | wc -l', rc: 0 });
  });
  it('expands ~ and $VARS in arguments unless expand_argument_vars is false', async () => {
    const ctx = makeCtx();
    const on = await runModule(command, { argv: ['echo', '$KPLAY_T_X', '~'], env: { KPLAY_T_X: 'val' } }, ctx);
    expect(data(on).stdout).toBe(`val ${os.homedir()}`);
    const off = await runModule(command, { argv: ['echo', '$KPLAY_T_X'], env: { KPLAY_T_X: 'val' }, expand_argument_vars: false }, ctx);
    expect(data(off).stdout).toBe('$KPLAY_T_X');
  });
  it('passes the task environment (the `environment` keyword) when the engine gives it', async () => {
    const ctx = Object.assign(makeCtx(), { environment: { KPLAY_T_ENV: 'from-task' } }) as ModuleContext;
    const r = await runModule(shell, { _raw_params: 'echo $KPLAY_T_ENV' }, ctx);
    expect(data(r).stdout).toBe('from-task');
  });
  it('a process killed by a signal has rc minus the signal number, and fails changed', async () => {
    const r = await runModule(shell, { cmd: 'kill -TERM $$' });
    expect(r).toMatchObject({ status: 'failed', msg: 'non-zero return code', changed: true });
    expect(data(r).rc).toBe(-15);
  });
  it('ok_codes accept other exit codes; the failure shows the end of stderr as a warning', async () => {
    expect((await runModule(shell, { cmd: 'exit 3', ok_codes: [0, 3] })).status).toBe('changed');
    const ctx = makeCtx();
    const r = await runModule(shell, { cmd: 'echo boom >&2; exit 4' }, ctx);
    expect(r.status).toBe('failed');
    expect(ctx.logs.warn.join('\n')).toContain('rc=4: boom');
  });
  it('a missing chdir fails before anything runs; a missing program is rc 2', async () => {
    const r = await runModule(command, { _raw_params: `touch ${tmp}/x chdir=${tmp}/nope` });
    expect(r).toMatchObject({ status: 'failed', msg: expect.stringContaining('Unable to change directory') });
    expect(existsSync(`${tmp}/x`)).toBe(false);
    const m = await runModule(command, { argv: ['/nonexistent/kplay-prog'] });
    expect(m).toMatchObject({ status: 'failed', msg: expect.stringContaining('No such file or directory') });
    expect(data(m).rc).toBe(2);
  });
  it('free-form booleans are parsed and bad ones rejected; `warn` is gone (as ansible-core 2.19)', async () => {
    const r = await runModule(shell, { _raw_params: "printf 'x\\n\\n' strip_empty_ends=no" });
    expect(data(r).stdout).toBe('x\n\n');
    expect(await runModule(shell, { _raw_params: 'true strip_empty_ends=maybe' })).toMatchObject({ status: 'failed', msg: expect.stringContaining('not a valid boolean') });
    expect(await runModule(command, { _raw_params: 'true warn=no' })).toMatchObject({ status: 'failed', msg: expect.stringContaining('warn') });
  });
  it('relative creates/removes are relative to chdir (chdir happens first, as in Ansible)', async () => {
    const dir = path.join(tmp, 'chdir-base');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'made'), '');
    const r = await runModule(command, { _raw_params: `touch ran chdir=${dir} creates=made` });
    expect(r).toMatchObject({ status: 'ok', msg: "Did not run command since 'made' exists" });
    expect(existsSync(path.join(dir, 'ran'))).toBe(false);
    const g = await runModule(command, { _raw_params: `touch ran chdir=${dir} removes=ma*` });
    expect(g.status).toBe('changed');
    expect(existsSync(path.join(dir, 'ran'))).toBe(true);
  });
  it('shell has no argv', async () => {
    const checked = await runModule(shell, { cmd: 'true' });
    expect(checked.status).toBe('changed');
    await expect(runModule(shell, { argv: ['true'] })).rejects.toThrow(/argv/);
  });
});

describe('file', () => {
  it('a missing owner fails, also in check mode, without creating anything', async () => {
    const p = path.join(tmp, 'owned');
    const r = await runModule(file, { path: p, state: 'directory', owner: 'no-such-user-kplay' }, makeCtx({ checkMode: true }));
    expect(r).toMatchObject({ status: 'failed', msg: expect.stringContaining('no-such-user-kplay') });
    expect(existsSync(p)).toBe(false);
  });
  it('path is required (any of path, dest, name)', async () => {
    expect(await runModule(file, { state: 'directory' })).toMatchObject({ status: 'failed', msg: 'missing required arguments: path' });
  });
  it('a numeric mode (YAML 0644) is the mode itself', async () => {
    const p = path.join(tmp, 'num');
    await runModule(file, { path: p, state: 'touch', mode: 0o640 });
    expect(statSync(p).mode & 0o7777).toBe(0o640);
  });
  it('links: refuses to replace a file without force, replaces it with force', async () => {
    const target = path.join(tmp, 'target');
    writeFileSync(target, 't');
    const p = path.join(tmp, 'occupied');
    writeFileSync(p, 'f');
    expect(await runModule(file, { src: target, dest: p, state: 'link' })).toMatchObject({ status: 'failed', msg: expect.stringContaining('refusing to convert from file to symlink') });
    const r = await runModule(file, { src: target, dest: p, state: 'link', force: true });
    expect(r.status).toBe('changed');
    expect(data(r)).toMatchObject({ state: 'link', src: target });
  });
  it('absent removes a tree; --diff says what it was', async () => {
    const d = path.join(tmp, 'tree');
    mkdirSync(path.join(d, 'a/b'), { recursive: true });
    writeFileSync(path.join(d, 'a/b/f'), 'x');
    const r = await runModule(file, { path: d, state: 'absent' }, makeCtx({ diffMode: true }));
    expect(r.status).toBe('changed');
    expect('diff' in r && r.diff?.[0]?.before).toContain('state: directory');
    expect(existsSync(d)).toBe(false);
  });
  it('without state, a link stays a link and its target gets the mode (as ansible-core)', async () => {
    const t = path.join(tmp, 'real');
    writeFileSync(t, 'r');
    const l = path.join(tmp, 'to-real');
    symlinkSync(t, l);
    const r = await runModule(file, { path: l, mode: '0600' });
    expect(r.status).toBe('changed');
    expect(data(r)).toMatchObject({ dest: l, src: t, state: 'link', mode: '0777' });
    expect(statSync(t).mode & 0o777).toBe(0o600);
  });
});

describe('copy and template', () => {
  it('validate: a failing check leaves the destination untouched', async () => {
    const dest = path.join(tmp, 'validated');
    writeFileSync(dest, 'old');
    const r = await runModule(copy, { content: 'new', dest, validate: 'grep -q never %s' });
    expect(r).toMatchObject({ status: 'failed', msg: 'failed to validate' });
    expect(readFileSync(dest, 'utf8')).toBe('old');
    expect(readdirSync(tmp).filter((f) => f.startsWith('.kplay-tmp-'))).toEqual([]);
    expect(await runModule(copy, { content: 'new', dest, validate: 'grep -q new' })).toMatchObject({ status: 'failed', msg: expect.stringContaining('%s') });
  });
  it('mode preserve takes the source\'s; a directory copies recursively (trailing slash: its contents)', async () => {
    const src = path.join(tmp, 'srcdir');
    mkdirSync(path.join(src, 'in'), { recursive: true });
    writeFileSync(path.join(src, 'in/run.sh'), '#!/bin/sh\n');
    chmodSync(path.join(src, 'in/run.sh'), 0o750);
    const into = path.join(tmp, 'into');
    mkdirSync(into);
    const a = await runModule(copy, { src, dest: into, mode: 'preserve' });
    expect(a.status).toBe('changed');
    expect(statSync(path.join(into, 'srcdir/in/run.sh')).mode & 0o777).toBe(0o750);
    const b = await runModule(copy, { src: `${src}/`, dest: into });
    expect(b.status).toBe('changed');
    expect(existsSync(path.join(into, 'in/run.sh'))).toBe(true);
    expect((await runModule(copy, { src: `${src}/`, dest: into })).status).toBe('ok');
  });
  it('a relative src is looked up in files/ first, then next to the playbook (as Ansible)', async () => {
    const base = path.join(tmp, 'pb');
    mkdirSync(path.join(base, 'files'), { recursive: true });
    writeFileSync(path.join(base, 'files/app.conf'), 'from files/');
    writeFileSync(path.join(base, 'app.conf'), 'next to the playbook');
    writeFileSync(path.join(base, 'only-here.conf'), 'only here');
    const ctx = makeCtx({ baseDir: base });
    await runModule(copy, { src: 'app.conf', dest: path.join(tmp, 'found1') }, ctx);
    expect(readFileSync(path.join(tmp, 'found1'), 'utf8')).toBe('from files/');
    await runModule(copy, { src: 'only-here.conf', dest: path.join(tmp, 'found2') }, ctx);
    expect(readFileSync(path.join(tmp, 'found2'), 'utf8')).toBe('only here');
    expect(await runModule(copy, { src: 'nowhere.conf', dest: path.join(tmp, 'found3') }, ctx)).toMatchObject({ status: 'failed', msg: expect.stringContaining("Could not find or access 'nowhere.conf'") });
  });
  it('a vault-encrypted source: decrypted with the vault secrets (its content a secret), copied as it is with decrypt: false, fails clearly without a secret', async () => {
    const src = path.join(tmp, 'vaulted');
    const text = vaultEncrypt('vaulted-content-1\n', Buffer.from('pw'));
    writeFileSync(src, text);
    expect(await runModule(copy, { src, dest: path.join(tmp, 'v-out') })).toMatchObject({ status: 'failed', msg: `A vault password or secret must be specified to decrypt ${src}` });
    setVaultSecrets([{ id: 'default', secret: Buffer.from('pw') }]);
    try {
      const ctx = makeCtx();
      expect(await runModule(copy, { src, dest: path.join(tmp, 'v-out') }, ctx)).toMatchObject({ status: 'changed' });
      expect(readFileSync(path.join(tmp, 'v-out'), 'utf8')).toBe('vaulted-content-1\n');
      expect(ctx.masker.mask('x vaulted-content-1 y')).toBe('x ******** y');
      expect(await runModule(copy, { src, dest: path.join(tmp, 'v-raw'), decrypt: false })).toMatchObject({ status: 'changed' });
      expect(readFileSync(path.join(tmp, 'v-raw'), 'utf8')).toBe(text);
      const tpl = path.join(tmp, 'vaulted.j2');
      writeFileSync(tpl, vaultEncrypt('t={{ 1 + 1 }}\n', Buffer.from('pw')));
      expect(await runModule(template, { src: tpl, dest: path.join(tmp, 'v-tpl') }, ctx)).toMatchObject({ status: 'changed' });
      expect(readFileSync(path.join(tmp, 'v-tpl'), 'utf8')).toBe('t=2\n');
    } finally {
      setVaultSecrets([]);
    }
  });
  it('template: unsupported options fail instead of being ignored; newline_sequence converts', async () => {
    const src = path.join(tmp, 't.j2');
    writeFileSync(src, 'a={{ a }}\nb\n');
    const dest = path.join(tmp, 't.out');
    expect(await runModule(template, { src, dest, lstrip_blocks: true }, makeCtx({ vars: { a: 1 } }))).toMatchObject({ status: 'failed', msg: expect.stringContaining('lstrip_blocks') });
    const r = await runModule(template, { src, dest, newline_sequence: '\r\n' }, makeCtx({ vars: { a: 1 } }));
    expect(r.status).toBe('changed');
    expect(readFileSync(dest, 'utf8')).toBe('a=1\r\nb\r\n');
  });
});

describe('wait_for, Ansible\'s form', () => {
  it('mixing the Kubernetes form and Ansible\'s form is an error naming both', async () => {
    const r = await runModule(waitFor, { kind: 'Deployment', name: 'web', port: 80 });
    expect(r).toMatchObject({ status: 'failed', msg: expect.stringMatching(/kind, name .*cannot be combined with port/) });
    expect(await runModule(waitFor, { name: 'web' })).toMatchObject({ status: 'failed', msg: expect.stringContaining('need kind') });
    expect(await runModule(waitFor, { kind: 'Pod', name: 'p', state: 'started' })).toMatchObject({ status: 'failed', msg: expect.stringContaining("Ansible's form") });
  });
  it('validates as Ansible: port and path, stopped with a path, a bad regex', async () => {
    expect(await runModule(waitFor, { port: 1, path: '/x' })).toMatchObject({ status: 'failed', msg: 'port and path parameter can not both be passed to wait_for' });
    expect(await runModule(waitFor, { path: '/x', state: 'stopped' })).toMatchObject({ status: 'failed', msg: expect.stringContaining('state=stopped') });
    expect(await runModule(waitFor, { path: '/x', search_regex: '(' })).toMatchObject({ status: 'failed', msg: expect.stringContaining('Invalid regular expression') });
  });
  it('a port that refuses connections is stopped; a listening one is started, then stopped when closed', async () => {
    const server = net.createServer((s) => s.end('hello ready\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    const up = await runModule(waitFor, { port, search_regex: 'ready', timeout: 10 });
    expect(up.status).toBe('ok');
    expect(data(up)).toMatchObject({ state: 'started', port, search_regex: 'ready', path: null });
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const down = await runModule(waitFor, { port, state: 'stopped', timeout: 10 });
    expect(down.status).toBe('ok');
  });
  it('times out with Ansible\'s message (or msg), elapsed in whole seconds', async () => {
    const r = await runModule(waitFor, { path: path.join(tmp, 'never'), timeout: 1, sleep: 1 });
    expect(r).toMatchObject({ status: 'failed', msg: `Timeout when waiting for file ${path.join(tmp, 'never')}` });
    expect(Number.isInteger(data(r).elapsed)).toBe(true);
  });
  it('match_groups and match_groupdict come from the file; Python named groups work', async () => {
    const f = path.join(tmp, 'log');
    writeFileSync(f, 'starting\nlistening on 8080\n');
    const r = await runModule(waitFor, { path: f, search_regex: 'on (?P<port>\\d+)$' });
    expect(data(r)).toMatchObject({ match_groups: ['8080'], match_groupdict: { port: '8080' }, state: 'file' });
  });
  it('drained counts active connections to the port from /proc/net/tcp*, minus exclude_hosts', async () => {
    const server = net.createServer(() => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    const client = net.connect({ host: '127.0.0.1', port });
    await new Promise<void>((resolve) => client.once('connect', () => resolve()));
    const { activeConnections } = await import('../../src/local/waitfor.js');
    expect(activeConnections(port, ['ESTABLISHED'], [])).toBeGreaterThanOrEqual(1);
    expect(activeConnections(port, ['ESTABLISHED'], ['127.0.0.1'])).toBe(0);
    const busy = await runModule(waitFor, { port, state: 'drained', timeout: 1, active_connection_states: ['ESTABLISHED'] });
    expect(busy).toMatchObject({ status: 'failed', msg: `Timeout when waiting for 127.0.0.1:${port} to drain` });
    const excluded = await runModule(waitFor, { port, state: 'drained', timeout: 5, active_connection_states: ['ESTABLISHED'], exclude_hosts: ['127.0.0.1'] });
    expect(excluded.status).toBe('ok');
    client.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  it('is skipped in check mode (as Ansible), after validating', async () => {
    expect((await runModule(waitFor, { port: 1 }, makeCtx({ checkMode: true }))).status).toBe('skipped');
  });
  it('Ctrl-C stops a wait at once', async () => {
    const ctx = makeCtx();
    const p = runModule(waitFor, { timeout: 300 }, ctx);
    ctx.abort.abort();
    expect(await p).toMatchObject({ status: 'failed', msg: 'wait_for interrupted' });
  });
});
