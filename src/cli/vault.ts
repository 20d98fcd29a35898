/**
 * The `--vault-*` flags of `kplay run`, `plan`, `drift` and `validate`, as ansible-playbook's:
 * `--vault-id LABEL@SOURCE` (repeatable), `--vault-password-file FILE` (also `--vault-pass-file`,
 * repeatable), `-J`/`--ask-vault-pass` (also `--ask-vault-password`); with
 * `ANSIBLE_VAULT_IDENTITY_LIST`, `ANSIBLE_VAULT_PASSWORD_FILE`, `ANSIBLE_ASK_VAULT_PASS`,
 * `ANSIBLE_VAULT_IDENTITY` and `ANSIBLE_VAULT_ID_MATCH`. The secrets are gathered once, before
 * the command loads anything (see src/load/vault-ids.ts for the order).
 */
import { Option, type Command } from 'commander';
import { setting } from '../core/settings.js';
import { setVaultSecrets } from '../core/vault.js';
import { loadVaultSecrets } from '../load/vault-ids.js';
import { askOn } from './prompt.js';
import { collect } from './options.js';

/** The vault options, to add to a command. */
export function vaultOptions(): Option[] {
  return [
    new Option('--vault-id <id>', 'a vault password: LABEL@FILE, LABEL@SCRIPT, LABEL@prompt, or a bare FILE/prompt (repeatable)').argParser(collect),
    new Option('--vault-password-file <file>', 'a vault password file, or an executable printing the password (repeatable; also ANSIBLE_VAULT_PASSWORD_FILE)').argParser(collect),
    new Option('--vault-pass-file <file>', 'the same as --vault-password-file').argParser(collect).hideHelp(),
    new Option('-J, --ask-vault-pass', 'ask for the vault password (also ANSIBLE_ASK_VAULT_PASS)'),
    new Option('--ask-vault-password', 'the same as --ask-vault-pass').hideHelp(),
  ];
}

/** Add {@link vaultOptions} to `cmd`. */
export function withVaultOptions(cmd: Command): Command {
  for (const o of vaultOptions()) cmd.addOption(o);
  return cmd;
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/**
 * Gather the vault secrets of a command's flags and the settings and make them the process's
 * (a command without the vault options gathers none). Warnings go to stderr as Ansible's.
 * @throws InputError when no password source could be read, or a prompt failed.
 */
export async function setupVault(cmd: Command): Promise<void> {
  if (!cmd.options.some((o) => o.attributeName() === 'vaultId')) return;
  const opts = cmd.opts<Record<string, unknown>>();
  const secrets = await loadVaultSecrets(
    {
      vaultIds: strings(opts.vaultId),
      passwordFiles: [...strings(opts.vaultPasswordFile), ...strings(opts.vaultPassFile)],
      askVaultPass: opts.askVaultPass === true || opts.askVaultPassword === true || setting('askVaultPass'),
      identityList: setting('vaultIdentityList'),
      configPasswordFile: setting('vaultPasswordFile'),
      defaultId: setting('vaultIdentity'),
      cwd: process.cwd(),
    },
    (question) => askOn({ input: process.stdin, output: process.stderr }, { name: 'vault password', prompt: question.replace(/: $/, ''), private: true, confirm: false }),
    (msg) => process.stderr.write(`[WARNING]: ${msg}\n`),
  );
  setVaultSecrets(secrets, { idMatch: setting('vaultIdMatch') });
}
