// Ansible Vault against the real thing (#49): texts kplay encrypts are read by `ansible-vault
// view`/`decrypt`, texts `ansible-vault encrypt`/`encrypt_string` writes are read by kplay (1.1
// and 1.2 with ids; empty, multi-line and unicode plaintexts), kplay's bytes equal ansible-vault's
// for the same salt, and one playbook with vault-encrypted group_vars, vars_files, include_vars,
// a `file` lookup, a `copy` source and inline `!vault` values ends the same way under
// ansible-playbook and `kplay run`, with the passwords from a file, a `--vault-id` file and a
// vault-id client script. kplay runs the built CLI; nothing here needs a cluster.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratch } from '../helpers/scratch.js';
import { setVaultSecrets, vaultDecrypt, vaultEncrypt, type VaultSecret } from '../../src/core/vault.js';
import { parseYaml } from '../../src/load/yaml.js';
import { jsonEvents, kplay } from '../helpers/cli.js';

const VENV = process.env.KPLAY_BENCH_VENV ?? path.join(os.homedir(), '.cache/kplay-bench/venv');
const BIN = path.join(VENV, 'bin');

const { root, write } = scratch('kplay-vault-parity-');

const ENV = { ...process.env, ANSIBLE_NOCOLOR: '1', ANSIBLE_HOME: path.join(root, '.ansible'), ANSIBLE_LOCALHOST_WARNING: 'False' };

/** Run a program of the venv; resolves with its exit code and output. */
function run(prog: string, args: string[], env: Record<string, string | undefined> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(path.join(BIN, prog), args, { cwd: root, env: { ...ENV, ...env }, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const defaultPass = write('default.pass', 'pw-default\n');
const prodPass = write('prod.pass', 'pw-prod\n');
// a vault-id client script, as ansible-core runs one: `--vault-id dev`
const devClient = write('dev-client.sh', '#!/bin/sh\nif [ "$2" = dev ]; then echo pw-dev; else echo "no $2" >&2; exit 2; fi\n', 0o755);
const secrets: VaultSecret[] = [
  { id: 'default', secret: Buffer.from('pw-default') },
  { id: 'prod', secret: Buffer.from('pw-prod') },
  { id: 'dev', secret: Buffer.from('pw-dev') },
];

const PLAINTEXTS: Record<string, string> = { empty: '', short: 'x', multi: 'line one\nline two\n\nline four', unicode: 'ünïcødé ☃ 日本 🎉\n' };

describe('vault texts: kplay and ansible-vault read each other', () => {
  it('the venv is installed', () => {
    expect(existsSync(path.join(BIN, 'ansible-vault')), `${BIN}/ansible-vault missing: run bash test/bench/install.sh`).toBe(true);
  });

  it('kplay encrypts (1.1, 1.2 with ids) → ansible-vault view and decrypt give the plaintext back', async () => {
    for (const [name, plain] of Object.entries(PLAINTEXTS)) {
      for (const [id, pass] of [['default', defaultPass], ['prod', prodPass], ['dev', devClient]] as const) {
        const file = write(`k-${name}-${id}.vault`, vaultEncrypt(plain, secrets.find((s) => s.id === id)?.secret ?? Buffer.from(''), { vaultId: id }));
        expect(readFileSync(file, 'utf8').split('\n')[0]).toBe(id === 'default' ? '$ANSIBLE_VAULT;1.1;AES256' : `$ANSIBLE_VAULT;1.2;AES256;${id}`);
        // `view` prints the plaintext and a line break when it does not end with one
        const view = await run('ansible-vault', ['view', '--vault-id', `${id}@${pass}`, file]);
        expect(view.stderr).toBe('');
        expect(view.stdout.replace(/\n$/, ''), `${name} ${id}`).toBe(plain.replace(/\n$/, ''));
        const out = path.join(root, `k-${name}-${id}.plain`);
        const dec = await run('ansible-vault', ['decrypt', '--vault-id', `${id}@${pass}`, '--output', out, file]);
        expect(dec.code, dec.stderr).toBe(0);
        expect(readFileSync(out, 'utf8')).toBe(plain);
      }
    }
  });

  it('ansible-vault encrypt and encrypt_string (1.1, 1.2 with ids) → kplay decrypts them, files and !vault scalars', async () => {
    for (const [name, plain] of Object.entries(PLAINTEXTS)) {
      for (const [id, pass] of [['default', defaultPass], ['prod', prodPass], ['dev', devClient]] as const) {
        const file = write(`a-${name}-${id}.vault`, plain);
        const enc = await run('ansible-vault', ['encrypt', ...(id === 'default' ? ['--vault-password-file', pass] : ['--vault-id', `${id}@${pass}`]), file]);
        expect(enc.code, enc.stderr).toBe(0);
        const text = readFileSync(file, 'utf8');
        expect(vaultDecrypt(text, secrets)).toEqual({ plaintext: Buffer.from(plain, 'utf8'), vaultId: id });
        if (plain === '') continue; // encrypt_string refuses an empty string
        const str = await run('ansible-vault', ['encrypt_string', '--vault-id', `${id}@${pass}`, '--encrypt-vault-id', id, '--name', 'v', plain]);
        expect(str.code, str.stderr).toBe(0);
        setVaultSecrets(secrets);
        try {
          expect(parseYaml(str.stdout, 'inline.yml').docs[0]).toEqual({ v: plain });
        } finally {
          setVaultSecrets([]);
        }
      }
    }
  });

  it('with the same salt (ANSIBLE_VAULT_ENCRYPT_SALT), kplay writes the bytes ansible-vault writes', async () => {
    for (const [name, plain] of Object.entries(PLAINTEXTS)) {
      const file = write(`salted-${name}.vault`, plain);
      const enc = await run('ansible-vault', ['encrypt', '--vault-id', `prod@${prodPass}`, file], { ANSIBLE_VAULT_ENCRYPT_SALT: 'a-fixed-salt' });
      expect(enc.code, enc.stderr).toBe(0);
      expect(vaultEncrypt(plain, Buffer.from('pw-prod'), { vaultId: 'prod', salt: 'a-fixed-salt' }), name).toBe(readFileSync(file, 'utf8'));
    }
  });
});

describe('a playbook with vaulted group_vars, vars_files, include_vars, lookups, copy and inline !vault values', () => {
  /** ansible-vault encrypt_string output for `name: plain` with a vault id. */
  const encryptString = async (id: string, pass: string, name: string, plain: string): Promise<string> => {
    const r = await run('ansible-vault', ['encrypt_string', '--vault-id', `${id}@${pass}`, '--encrypt-vault-id', id, '--name', name, plain]);
    if (r.code !== 0) throw new Error(r.stderr);
    return r.stdout;
  };
  const encryptFile = async (rel: string, text: string, args: string[]): Promise<void> => {
    const file = write(rel, text);
    const r = await run('ansible-vault', ['encrypt', ...args, file]);
    if (r.code !== 0) throw new Error(r.stderr);
  };

  const setup = async (): Promise<string> => {
    write('pb/inventory.yml', 'all:\n  hosts:\n    localhost:\n      ansible_connection: local\n      ansible_python_interpreter: "{{ ansible_playbook_python }}"\n');
    await encryptFile('pb/group_vars/all/vault.yml', 'vault_db_password: group-vars-secret-1\nvault_port: 5432\n', ['--vault-id', `prod@${prodPass}`]);
    write('pb/group_vars/all/main.yml', `db_password: "{{ vault_db_password }}"\n${await encryptString('dev', devClient, 'inline_token', 'inline-token-value-2')}`);
    await encryptFile('pb/secrets.yml', 'file_secret: vars-file-secret-3\n', ['--vault-password-file', defaultPass]);
    write('pb/inline.yml', `${await encryptString('prod', prodPass, 'multi', 'first line\nsecond line ü')}`);
    await encryptFile('pb/included.yml', 'included_secret: include-vars-secret-4\n', ['--vault-id', `dev@${devClient}`]);
    await encryptFile('pb/files/key.txt', 'file-lookup-secret-5\n', ['--vault-password-file', defaultPass]);
    const out = path.join(root, 'pb/copied.txt');
    const pb = write(
      'pb/site.yml',
      `- hosts: localhost
  gather_facts: false
  vars_files: [secrets.yml, inline.yml]
  tasks:
    - include_vars: included.yml
    - copy:
        src: key.txt
        dest: ${out}
    - assert:
        that:
          - db_password == 'group-vars-secret-1'
          - vault_port == 5432
          - inline_token == 'inline-token-value-2'
          - inline_token is vault_encrypted
          - db_password is not vault_encrypted
          - file_secret == 'vars-file-secret-3'
          - multi == 'first line\\nsecond line ü'
          - included_secret == 'include-vars-secret-4'
          - lookup('file', 'key.txt') == 'file-lookup-secret-5'
          - lookup('file', '${out}') == 'file-lookup-secret-5'
          - (inline_token | vault('k', vault_id='x') | unvault('k')) == 'inline-token-value-2'
          - ('plain' | unvault('k')) == 'plain'
    - name: show group_vars decrypted
      debug:
        msg: match
      when: db_password == 'group-vars-secret-1'
    - name: show the length of the inline value
      debug:
        msg: "{{ 'long' if inline_token | length > 10 else 'short' }}"
`,
    );
    return pb;
  };

  /** The `show …` messages of an ansible-playbook run, from its default output (`TASK [show …]`, then `ok: [localhost] => {"msg": …}` or `skipping:`). */
  const ansible = async (pb: string, args: string[], inv = path.join(root, 'pb/inventory.yml')): Promise<{ code: number; messages: string[]; stdout: string; stderr: string }> => {
    const r = await run('ansible-playbook', ['-i', inv, ...args, pb], { ANSIBLE_STDOUT_CALLBACK: 'ansible.builtin.default' });
    const messages: string[] = [];
    for (const m of r.stdout.matchAll(/^TASK \[(show[^\]]*)\] \*+\n(?:(skipping): \[localhost\]|ok: \[localhost\] => \{\n\s+"msg": (".*")\n\})/gm)) {
      messages.push(`${m[1] ?? ''}: ${m[2] ? 'skipped' : String(JSON.parse(m[3] ?? '""'))}`);
    }
    return { ...r, messages };
  };
  const kplayRun = async (pb: string, args: string[], inv = path.join(root, 'pb/inventory.yml')): Promise<{ code: number | null; messages: string[]; stdout: string; stderr: string }> => {
    const r = await kplay(['run', pb, '-i', inv, ...args, '-o', 'json'], { cwd: root, env: { HOME: path.join(root, 'home'), KUBECONFIG: path.join(root, 'home/none'), KPLAY_RECORD_DIR: path.join(root, 'records') } });
    const messages = jsonEvents(r.stdout)
      .filter((e) => e.type === 'task_result' && String(e.task).startsWith('show'))
      .map((e) => `${String(e.task)}: ${e.status === 'skipped' ? 'skipped' : String(e.msg)}`);
    return { ...r, messages };
  };
  const args = ['--vault-id', `prod@${prodPass}`, '--vault-id', `dev@${devClient}`, '--vault-password-file', defaultPass];

  it('the same outcome under ansible-playbook and kplay run, and no plaintext in anything kplay wrote', async () => {
    const pb = await setup();
    const [a, k] = [await ansible(pb, args), await kplayRun(pb, args)];
    expect(a.code, a.stdout.slice(0, 2000)).toBe(0);
    expect(k.code, k.stderr).toBe(0);
    expect(k.messages).toEqual(a.messages);
    expect(a.messages).toEqual(['show group_vars decrypted: match', 'show the length of the inline value: long']);
    expect(readFileSync(path.join(root, 'pb/copied.txt'), 'utf8')).toBe('file-lookup-secret-5\n');
    // ansible-playbook's JSON shows the assert's conditions only; kplay's events, stderr and records show no plaintext
    const records = existsSync(path.join(root, 'records')) ? JSON.stringify(readAll(path.join(root, 'records'))) : '';
    for (const secret of ['group-vars-secret-1', 'inline-token-value-2', 'vars-file-secret-3', 'include-vars-secret-4', 'file-lookup-secret-5', 'second line', 'pw-prod', 'pw-dev', 'pw-default']) {
      expect(k.stdout.includes(secret) || k.stderr.includes(secret) || records.includes(secret), secret).toBe(false);
    }
  });

  it('without the passwords both refuse, with ansible-core\'s message; with a wrong one too', async () => {
    const pb = await setup();
    const [a, k] = [await ansible(pb, []), await kplayRun(pb, [])];
    expect(a.code).not.toBe(0);
    expect(k.code).not.toBe(0);
    expect(a.stdout + a.stderr).toContain('Attempting to decrypt but no vault secrets found');
    expect(k.stderr).toContain('Attempting to decrypt but no vault secrets found on');
    const wrong = write('wrong.pass', 'nope\n');
    const [a2, k2] = [await ansible(pb, ['--vault-password-file', wrong]), await kplayRun(pb, ['--vault-password-file', wrong])];
    expect(a2.code).not.toBe(0);
    expect(k2.code).not.toBe(0);
    expect(a2.stdout + a2.stderr).toContain('Decryption failed (no vault secrets were found that could decrypt)');
    expect(k2.stderr).toContain('Decryption failed (no vault secrets were found that could decrypt) on');
    const [a3, k3] = [await ansible(pb, ['--vault-password-file', 'missing.pass']), await kplayRun(pb, ['--vault-password-file', 'missing.pass'])];
    expect(a3.stderr).toContain(`The vault password file ${path.join(root, 'missing.pass')} was not found`);
    expect(k3.stderr).toContain(`The vault password file ${path.join(root, 'missing.pass')} was not found`);
    expect(k3.code).not.toBe(0);
  });

  it('an inline value no given password opens fails where it is used (ignore_errors applies), the same way', async () => {
    const wrong = write('wrong2.pass', 'nope\n');
    const inline = `${(await encryptString('prod', prodPass, 'locked', 'locked-value-6')).trimEnd().replace(/^/gm, '    ')}\n`;
    // away from pb/ (its group_vars need the right passwords)
    const inv = write('lazy/inventory.yml', 'all:\n  hosts:\n    localhost:\n      ansible_connection: local\n      ansible_python_interpreter: "{{ ansible_playbook_python }}"\n');
    const pb = write('lazy/lazy.yml', `- hosts: localhost\n  gather_facts: false\n  vars:\n${inline}  tasks:\n    - name: show before\n      debug:\n        msg: before\n    - name: show locked\n      debug:\n        msg: "{{ locked }}"\n      ignore_errors: true\n    - name: show after\n      debug:\n        msg: after\n`);
    const [a, k] = [await ansible(pb, ['--vault-password-file', wrong], inv), await kplayRun(pb, ['--vault-password-file', wrong], inv)];
    expect(a.code, a.stdout + a.stderr).toBe(0);
    expect(k.code, k.stderr).toBe(0);
    expect(a.stdout).toContain('Attempt to use undecryptable variable: Decryption failed (no vault secrets were found that could decrypt).');
    expect(k.stdout).toContain('Attempt to use undecryptable variable: Decryption failed (no vault secrets were found that could decrypt).');
    expect(a.messages).toEqual(['show before: before', 'show after: after']);
    expect(k.messages.filter((m) => !m.startsWith('show locked'))).toEqual(a.messages);
  });
});

/** Every file's text under `dir` (run records, journals). */
function readAll(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of existsSync(d) ? readdirSync(d, { withFileTypes: true }) : []) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(readFileSync(p, 'utf8'));
    }
  };
  walk(dir);
  return out;
}
