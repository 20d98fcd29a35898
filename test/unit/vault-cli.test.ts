// Vault-decrypted values are secrets (#49): a playbook on the implicit localhost (no cluster) with
// an inline `!vault` value and a vault-encrypted vars file passes them to `debug` (var= and msg,
// through filters), `set_fact`, `copy` content with `--diff`, a failing `fail`; the plaintexts
// never appear in the text output (-vv), the JSON events, stderr, or the run record and journal.
// Also: the `--vault-*` flags on `validate`, `ANSIBLE_VAULT_PASSWORD_FILE`, a bad source.
// Spawns the built kplay.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratch } from '../helpers/scratch.js';
import { vaultEncrypt } from '../../src/core/vault.js';
import { jsonEvents, kplay } from '../helpers/cli.js';

const { root, write } = scratch('kplay-vault-cli-');

const records = path.join(root, 'records');
const ENV = { HOME: path.join(root, 'home'), KUBECONFIG: path.join(root, 'home/none'), K8S_AUTH_KUBECONFIG: undefined, K8S_AUTH_CONTEXT: undefined, KPLAY_RECORD_DIR: records, XDG_CACHE_HOME: path.join(root, 'cache') };
const opts = { cwd: root, env: ENV };

const INLINE = 'inline-canary-7Qx2';
const FILE_VALUE = 'file-canary-9Zk4';
const PASSWORD = 'vault-pass-canary';
const inline = vaultEncrypt(INLINE, Buffer.from(PASSWORD), { vaultId: 'prod' }).trimEnd().split('\n').map((l) => `  ${l}`).join('\n');
write('pass.txt', `${PASSWORD}\n`);
write('vars/secret.yml', vaultEncrypt(`api_value: ${FILE_VALUE}\n`, Buffer.from(PASSWORD)));
const out = path.join(root, 'out.txt');
const pb = write(
  'site.yml',
  `- hosts: localhost
  vars_files: [vars/secret.yml]
  vars:
    vaulted: !vault |
${inline.replace(/^/gm, "    ")}
  tasks:
    - debug: var=vaulted
    - debug:
        msg: "{{ vaulted | upper }} and {{ api_value }} reversed {{ api_value | reverse | join('') }}"
    - set_fact:
        derived: "prefix-{{ vaulted }}"
    - debug: var=derived
    - copy:
        content: "{{ api_value }}\\n"
        dest: ${out}
    - fail:
        msg: "bad {{ vaulted }}"
      ignore_errors: true
    - assert:
        that: vaulted == '${INLINE}' and api_value == '${FILE_VALUE}'
`,
);

/** Every file's text under `dir`. */
function readAll(dir: string): string {
  if (!existsSync(dir)) return '';
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(path.join(e.parentPath, e.name), 'utf8'))
    .join('\n');
}

const leaks = (text: string): string[] => [INLINE, FILE_VALUE, PASSWORD, INLINE.toUpperCase(), [...FILE_VALUE].reverse().join(''), Buffer.from(INLINE).toString('base64')].filter((s) => text.includes(s));

describe('vault values are secrets in every output', () => {
  it('text (-vv, --diff), JSON events, stderr and the run record show no plaintext', async () => {
    const text = await kplay(['run', pb, '--vault-id', 'prod@pass.txt', '--diff', '-vv', '--progress', 'plain'], opts);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('vaulted: ********');
    expect(readFileSync(out, 'utf8')).toBe(`${FILE_VALUE}\n`);
    rmSync(out);
    const json = await kplay(['run', pb, '--vault-password-file', 'pass.txt', '--diff', '-o', 'json'], opts);
    expect(json.code, json.stderr).toBe(0);
    expect(jsonEvents(json.stdout).some((e) => e.type === 'task_result')).toBe(true);
    const recorded = readAll(records);
    expect(recorded).not.toBe('');
    expect(leaks(text.stdout + text.stderr)).toEqual([]);
    expect(leaks(json.stdout + json.stderr)).toEqual([]);
    expect(leaks(recorded)).toEqual([]);
  });

  it('validate takes the vault flags and ANSIBLE_VAULT_PASSWORD_FILE; without them an inline !vault value still loads', async () => {
    const ok = await kplay(['validate', pb, '--vault-password-file', 'pass.txt'], opts);
    expect(ok.code, ok.stderr).toBe(0);
    const env = await kplay(['validate', pb], { cwd: root, env: { ...ENV, ANSIBLE_VAULT_PASSWORD_FILE: path.join(root, 'pass.txt') } });
    expect(env.code, env.stderr).toBe(0);
    // ansible.cfg's vault_password_file (relative to the ansible.cfg), read as ansible-core reads it
    const cfgDir = path.join(root, 'cfg');
    write('cfg/ansible.cfg', '[defaults]\nvault_password_file = ../pass.txt\n');
    const cfg = await kplay(['validate', pb], { cwd: cfgDir, env: ENV });
    expect(cfg.code, cfg.stderr).toBe(0);
    // as ansible-core 2.19: the inline vault value (line 4) loads without a password (it fails only where it is used); the vaulted vars file does not
    const none = await kplay(['validate', pb], opts);
    expect(none.code).toBe(1);
    expect(none.stderr).not.toContain(`${pb}:4:14: `);
    expect(none.stderr).toContain('secret.yml:1:1: Attempting to decrypt but no vault secrets found on');
    const missing = await kplay(['validate', pb, '--vault-id', 'prod@nope.txt'], opts);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`[WARNING]: Error getting vault password file (prod): The vault password file ${path.join(root, 'nope.txt')} was not found`);
    expect(leaks(ok.stdout + ok.stderr + none.stderr + missing.stderr)).toEqual([]);
  });
});
