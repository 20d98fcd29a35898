/**
 * The vault secrets of a run, gathered as ansible-core's CLI does (`setup_vault_secrets`): the
 * ids of `ANSIBLE_VAULT_IDENTITY_LIST` then `--vault-id` (`label@source`, or a bare source), then
 * the `--vault-password-file`s and `ANSIBLE_VAULT_PASSWORD_FILE` (under the default id), then
 * `--ask-vault-pass`. A source is `prompt` (asked on the terminal), an executable (run: its
 * stdout is the password; a `*-client` script is given `--vault-id <label>`), or a file (its
 * content, stripped; itself possibly vault-encrypted with a secret given before it).
 *
 * A source that cannot be read is a warning while another one works, and the error otherwise.
 */
import { spawn } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { isVaultText, vaultDecrypt, VaultError, type VaultSecret } from '../core/vault.js';
import { InputError } from './errors.js';

/** Where a run's vault secrets come from (flags and settings). */
export interface VaultSources {
  /** `--vault-id` values, in order. */
  vaultIds?: readonly string[];
  /** `--vault-password-file` values, in order. */
  passwordFiles?: readonly string[];
  /** `--ask-vault-pass` (or `ANSIBLE_ASK_VAULT_PASS`). */
  askVaultPass?: boolean;
  /** `ANSIBLE_VAULT_IDENTITY_LIST`, split on commas. */
  identityList?: readonly string[];
  /** `ANSIBLE_VAULT_PASSWORD_FILE`. */
  configPasswordFile?: string;
  /** `ANSIBLE_VAULT_IDENTITY`: the id of secrets given without one (default `default`). */
  defaultId?: string;
  /** The directory relative paths are resolved from (the working directory). */
  cwd: string;
}

/** How a password is asked for: the question (`Vault password: `); resolves with the answer. */
export type AskPassword = (question: string) => Promise<string>;

/** `label@source` → [label, source]; without `@` the whole string is the source (ansible-core's split_vault_id). */
export function splitVaultId(slug: string): [string | undefined, string] {
  const at = slug.indexOf('@');
  return at < 0 ? [undefined, slug] : [slug.slice(0, at), slug.slice(at + 1)];
}

/** The ordered `label@source` slugs of {@link VaultSources}, as ansible-core's build_vault_ids. */
export function vaultIdSlugs(src: VaultSources): string[] {
  const dflt = src.defaultId || 'default';
  const slugs = [...(src.identityList ?? []), ...(src.vaultIds ?? [])];
  for (const f of [...(src.passwordFiles ?? []), ...(src.configPasswordFile ? [src.configPasswordFile] : [])]) slugs.push(`${dflt}@${f}`);
  if (src.askVaultPass) slugs.push(`${dflt}@prompt_ask_vault_pass`);
  return slugs;
}

/** Strip the characters Python's `bytes.strip()` strips. */
const pyStrip = (b: Buffer): Buffer => {
  let s = 0;
  let e = b.length;
  const ws = (c: number | undefined): boolean => c === 0x20 || (c !== undefined && c >= 0x09 && c <= 0x0d);
  while (s < e && ws(b[s])) s++;
  while (e > s && ws(b[e - 1])) e--;
  return b.subarray(s, e);
};
/** Strip leading and trailing `\r`/`\n` only. */
const stripCrLf = (b: Buffer): Buffer => {
  let s = 0;
  let e = b.length;
  const nl = (c: number | undefined): boolean => c === 0x0a || c === 0x0d;
  while (s < e && nl(b[s])) s++;
  while (e > s && nl(b[e - 1])) e--;
  return b.subarray(s, e);
};

/** A password source that does not exist (ansible-core: `Error getting vault password file`, else `Error in vault password file loading`). */
class MissingSource extends VaultError {}

/** Run a password script; resolves with its stdout, or throws ansible-core's error. */
function runScript(file: string, vaultId: string | undefined, client: boolean): Promise<Buffer> {
  const args = client && vaultId ? ['--vault-id', vaultId] : [];
  return new Promise((resolve, reject) => {
    const what = client ? 'Vault password client script' : 'vault password script';
    const child = spawn(file, args, { stdio: ['inherit', 'pipe', client ? 'pipe' : 'inherit'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (c: Buffer) => out.push(c));
    child.stderr?.on('data', (c: Buffer) => err.push(c));
    child.on('error', (e) => reject(new VaultError(`Problem running ${what.replace(/^V/, 'v')} ${file} (${e.message}). If this is not a script, remove the executable bit from the file.`)));
    child.on('close', (code) => {
      const stderr = Buffer.concat(err).toString('utf8');
      if (client && code === 2) reject(new VaultError(`Vault password client script ${file} did not find a secret for vault-id=${vaultId ?? ''}: ${stderr}`));
      else if (code !== 0 && client) reject(new VaultError(`Vault password client script ${file} returned non-zero (${String(code)}) when getting secret for vault-id=${vaultId ?? ''}: ${stderr}`));
      else if (code !== 0) reject(new VaultError(`Vault password script ${file} returned non-zero (${String(code)}): ${stderr}`));
      else resolve(Buffer.concat(out));
    });
  });
}

/** The password a file or script source gives (see the module comment). */
async function fromFile(source: string, label: string | undefined, cwd: string, known: readonly VaultSecret[]): Promise<Buffer> {
  const file = path.resolve(cwd, source.startsWith('~/') ? path.join(process.env.HOME ?? '', source.slice(2)) : source);
  const st = await stat(file).catch(() => undefined);
  if (!st) throw new MissingSource(`The vault password file ${file} was not found`);
  if (st.isDirectory()) throw new MissingSource(`The vault password file provided '${file}' can not be a directory`);
  if ((st.mode & 0o111) !== 0) {
    const client = path.basename(file, path.extname(file)).endsWith('-client');
    const pass = stripCrLf(await runScript(file, label, client));
    if (pass.length === 0) throw new VaultError(`Invalid vault password was provided from script (${file})`);
    return pass;
  }
  let data: Buffer;
  try {
    data = pyStrip(await readFile(file));
  } catch {
    throw new VaultError(`Could not read vault password file '${file}'.`);
  }
  if (isVaultText(data.toString('latin1'))) data = vaultDecrypt(data.toString('latin1'), known).plaintext;
  const pass = stripCrLf(data);
  if (pass.length === 0) throw new VaultError(`Invalid vault password was provided from file (${file})`);
  return pass;
}

/**
 * Gather the secrets of {@link VaultSources}, in ansible-core's order. `ask` asks for a password
 * (`prompt` sources, `--ask-vault-pass`); `warn` is told of a source that failed while others worked.
 * @throws InputError when a prompt fails, or every file source failed.
 */
export async function loadVaultSecrets(src: VaultSources, ask: AskPassword, warn: (msg: string) => void): Promise<VaultSecret[]> {
  const dflt = src.defaultId || 'default';
  const secrets: VaultSecret[] = [];
  let last: Error | undefined;
  for (const slug of vaultIdSlugs(src)) {
    const [label, source] = splitVaultId(slug);
    if (source === 'prompt' || source === 'prompt_ask_vault_pass') {
      const id = label || dflt;
      const answer = await ask(source === 'prompt' ? `Vault password (${id}): ` : 'Vault password: ');
      const pass = pyStrip(Buffer.from(answer, 'utf8'));
      if (pass.length === 0) throw new InputError('Invalid vault password was provided', undefined, 'type the vault password, or give it with --vault-password-file / --vault-id LABEL@FILE');
      secrets.push({ id, secret: pass });
      continue;
    }
    try {
      secrets.push({ id: label || dflt, secret: await fromFile(source, label, src.cwd, secrets) });
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      warn(`${e instanceof MissingSource ? 'Error getting vault password file' : 'Error in vault password file loading'} (${label ?? ''}): ${msg}`);
      last = e instanceof Error ? e : new Error(msg);
    }
  }
  if (last && secrets.length === 0) throw new InputError(last.message, undefined, 'give a readable vault password file (--vault-password-file FILE, --vault-id LABEL@FILE) or --ask-vault-pass');
  return secrets;
}
