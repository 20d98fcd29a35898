/**
 * Ansible Vault, format 1.1 and 1.2 (`$ANSIBLE_VAULT;1.1;AES256`, `$ANSIBLE_VAULT;1.2;AES256;<id>`),
 * byte-compatible with `ansible-vault`: a PBKDF2-HMAC-SHA256 key (10000 iterations, 80 bytes: the
 * AES key, the HMAC key, the counter) from the password and a 32-byte salt; AES-256-CTR over the
 * PKCS7-padded plaintext; HMAC-SHA256 over the ciphertext. The body is
 * `hex(hex(salt) \n hex(hmac) \n hex(ciphertext))`, cut into lines of 80 characters.
 *
 * The secrets a run decrypts with are set once ({@link setVaultSecrets}, from `--vault-id`,
 * `--vault-password-file`, …: see src/load/vault-ids.ts) and tried as ansible-core does: the
 * secret whose id the 1.2 header names first, then every other one in order.
 */
import { createCipheriv, createDecipheriv, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';

/** The first bytes of every vault text. */
export const VAULT_HEADER = '$ANSIBLE_VAULT';

/** A vault password and the id it is known by (`default` when none was given). */
export interface VaultSecret {
  /** The vault id (`dev` of `--vault-id dev@file`), `default` when none. */
  id: string;
  /** The password's bytes (trailing line breaks already stripped). */
  secret: Buffer;
}

/** A vault text that could not be read or decrypted; the message is ansible-core's. */
export class VaultError extends Error {
  override name = 'VaultError';
}

/** The parts of a vault envelope (its header and hex body). */
export interface VaultEnvelope {
  /** `1.1` or `1.2`. */
  version: string;
  /** `AES256`. */
  cipher: string;
  /** The id of a 1.2 header, else undefined. */
  vaultId?: string;
  /** The hex body, lines joined. */
  body: string;
}

/** True when `value` is a vault text (a string starting with `$ANSIBLE_VAULT`), as ansible-core's `is_encrypted`. */
export function isVaultText(value: unknown): value is string {
  // eslint-disable-next-line no-control-regex
  return typeof value === 'string' && value.startsWith(VAULT_HEADER) && /^[\x00-\x7f]*$/.test(value);
}

/** Split a vault text into its header fields and body. @throws VaultError on a malformed header. */
export function parseEnvelope(text: string): VaultEnvelope {
  const lines = text.trim().split(/\r?\n/);
  const header = (lines[0] ?? '').trim().split(';');
  if (header[0] !== VAULT_HEADER || header.length < 3) throw new VaultError('Vault envelope format error.');
  const version = (header[1] ?? '').trim();
  const cipher = (header[2] ?? '').trim();
  const vaultId = header.length >= 4 ? (header[3] ?? '').trim() : undefined;
  return { version, cipher, ...(vaultId !== undefined ? { vaultId } : {}), body: lines.slice(1).map((l) => l.trim()).join('') };
}

const ITERATIONS = 10000;
const KEY_LENGTH = 32;
const IV_LENGTH = 16;
const keyCache = new Map<string, { aes: Buffer; hmac: Buffer; iv: Buffer }>();

/** The AES key, HMAC key and counter for a password and salt (remembered: a run decrypts many values with one password). */
function deriveKeys(password: Buffer, salt: Buffer): { aes: Buffer; hmac: Buffer; iv: Buffer } {
  const cacheKey = `${password.toString('base64')}:${salt.toString('base64')}`;
  const hit = keyCache.get(cacheKey);
  if (hit) return hit;
  const key = pbkdf2Sync(password, salt, ITERATIONS, 2 * KEY_LENGTH + IV_LENGTH, 'sha256');
  const out = { aes: key.subarray(0, KEY_LENGTH), hmac: key.subarray(KEY_LENGTH, 2 * KEY_LENGTH), iv: key.subarray(2 * KEY_LENGTH) };
  if (keyCache.size > 256) keyCache.clear();
  keyCache.set(cacheKey, out);
  return out;
}

const HEX = /^(?:[0-9a-fA-F]{2})*$/;

/** Bytes of a hex string. @throws VaultError as ansible-core's unhexlify error. */
function unhex(text: string): Buffer {
  if (!HEX.test(text)) throw new VaultError('Vault format unhexlify error.');
  return Buffer.from(text, 'hex');
}

/** Salt, HMAC (hex text) and ciphertext of an envelope's body. */
function parseBody(body: string): { salt: Buffer; hmac: string; ciphertext: Buffer } {
  const inner = unhex(body).toString('latin1');
  const first = inner.indexOf('\n');
  const second = first < 0 ? -1 : inner.indexOf('\n', first + 1);
  if (second < 0) throw new VaultError('Vault vaulttext format error.');
  return { salt: unhex(inner.slice(0, first)), hmac: inner.slice(first + 1, second), ciphertext: unhex(inner.slice(second + 1)) };
}

/** Decrypt a body with one password; undefined when the HMAC does not match (a wrong password). */
function decryptWith(parts: { salt: Buffer; hmac: string; ciphertext: Buffer }, password: Buffer): Buffer | undefined {
  const { aes, hmac, iv } = deriveKeys(password, parts.salt);
  const expected = createHmac('sha256', hmac).update(parts.ciphertext).digest();
  const given = unhex(parts.hmac);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  const d = createDecipheriv('aes-256-ctr', aes, iv);
  const padded = Buffer.concat([d.update(parts.ciphertext), d.final()]);
  const pad = padded[padded.length - 1] ?? 0;
  if (pad < 1 || pad > 16 || pad > padded.length || !padded.subarray(padded.length - pad).every((b) => b === pad)) throw new VaultError('Invalid padding bytes.');
  return padded.subarray(0, padded.length - pad);
}

/** The result of a decryption: the plaintext and the id of the secret that opened it. */
export interface Decrypted {
  /** The plaintext bytes. */
  plaintext: Buffer;
  /** The id of the secret used. */
  vaultId: string;
}

/**
 * Decrypt a vault text with `secrets`, trying them as ansible-core does: those whose id the 1.2
 * header names first, then (unless `idMatch`) all the others in order.
 * @throws VaultError with ansible-core's messages: `Attempting to decrypt but no vault secrets
 * found.`, `Decryption failed (no vault secrets were found that could decrypt).`, format errors.
 */
export function vaultDecrypt(text: string, secrets: readonly VaultSecret[] = vaultSecrets(), opts: { idMatch?: boolean } = {}): Decrypted {
  if (!isVaultText(text)) throw new VaultError('Input is not vault encrypted data.');
  const env = parseEnvelope(text);
  if (env.cipher !== 'AES256') throw new VaultError(`Cipher '${env.cipher}' could not be found.`);
  if (secrets.length === 0) throw new VaultError('Attempting to decrypt but no vault secrets found.');
  const parts = parseBody(env.body);
  const matching = env.vaultId ? secrets.filter((s) => s.id === env.vaultId) : [];
  const others = opts.idMatch ? [] : secrets.filter((s) => s.id !== env.vaultId);
  for (const s of [...matching, ...others]) {
    const plaintext = decryptWith(parts, s.secret);
    if (plaintext) return { plaintext, vaultId: s.id };
  }
  throw new VaultError('Decryption failed (no vault secrets were found that could decrypt).');
}

/**
 * Encrypt `plaintext` (text is UTF-8) with `secret`, as `ansible-vault encrypt` writes it: format
 * 1.1 without an id (or with `default`), 1.2 with `vaultId`; lines of 80 characters and a final
 * line break. `salt` (tests, `ANSIBLE_VAULT_ENCRYPT_SALT`) replaces the 32 random bytes.
 * @throws VaultError when the plaintext is already a vault text.
 */
export function vaultEncrypt(plaintext: string | Buffer, secret: Buffer, opts: { vaultId?: string; salt?: string | Buffer } = {}): string {
  const data = typeof plaintext === 'string' ? Buffer.from(plaintext, 'utf8') : plaintext;
  if (data.subarray(0, VAULT_HEADER.length).toString('latin1') === VAULT_HEADER) throw new VaultError('input is already encrypted');
  const salt = opts.salt === undefined ? randomBytes(32) : Buffer.from(opts.salt);
  if (salt.length === 0) throw new VaultError('Empty or invalid salt passed to encrypt()');
  const { aes, hmac, iv } = deriveKeys(secret, salt);
  const pad = 16 - (data.length % 16);
  const c = createCipheriv('aes-256-ctr', aes, iv);
  const ciphertext = Buffer.concat([c.update(Buffer.concat([data, Buffer.alloc(pad, pad)])), c.final()]);
  const mac = createHmac('sha256', hmac).update(ciphertext).digest('hex');
  const body = Buffer.from(`${salt.toString('hex')}\n${mac}\n${ciphertext.toString('hex')}`, 'latin1').toString('hex');
  const id = opts.vaultId && opts.vaultId !== 'default' ? opts.vaultId : undefined;
  const header = id ? `${VAULT_HEADER};1.2;AES256;${id}` : `${VAULT_HEADER};1.1;AES256`;
  const lines = [header];
  for (let i = 0; i < body.length; i += 80) lines.push(body.slice(i, i + 80));
  return `${lines.join('\n')}\n`;
}

let current: readonly VaultSecret[] = [];
let idMatchSetting = false;

/** Set the secrets this process decrypts with (the CLI, from `--vault-id` and the rest), and whether only a matching id may decrypt (`ANSIBLE_VAULT_ID_MATCH`). */
export function setVaultSecrets(secrets: readonly VaultSecret[], opts: { idMatch?: boolean } = {}): void {
  current = [...secrets];
  idMatchSetting = opts.idMatch === true;
}

/** The secrets set by {@link setVaultSecrets} (none before). */
export function vaultSecrets(): readonly VaultSecret[] {
  return current;
}

/** Decrypt with the process's secrets and id-match setting; the plaintext bytes. @throws VaultError. */
export function decryptBytes(text: string): Buffer {
  return vaultDecrypt(text, current, { idMatch: idMatchSetting }).plaintext;
}

/** {@link decryptBytes}, the plaintext as text (UTF-8). @throws VaultError. */
export function decryptText(text: string): string {
  return decryptBytes(text).toString('utf8');
}

/**
 * The internal filter an inline `!vault` value that could not be decrypted becomes
 * (`{{ 'ciphertext' | kplay.vault_undecryptable('why') }}`): it gives a marker that fails with
 * ansible-core's message where the value is used, as ansible-core decrypts inline values only
 * when they are used; `unvault` and `is vault_encrypted` read its ciphertext.
 */
export const UNDECRYPTABLE_FILTER = 'kplay.vault_undecryptable';

/** The template standing for an inline vault value `ciphertext` that could not be decrypted, failing with `message` where it is used. */
export function undecryptable(ciphertext: string, message: string): string {
  // the ciphertext's line breaks stay raw (a Jinja string may span lines; the lexer does not read `\n` escapes)
  return `{{ ${JSON.stringify(ciphertext).replace(/\\n/g, '\n')} | ${UNDECRYPTABLE_FILTER}(${JSON.stringify(message)}) }}`;
}

const vaulted = new Set<string>();

/** Remember `plaintext` as the value of an inline `!vault` scalar (for the `vault_encrypted` test). */
export function rememberVaulted(plaintext: string): void {
  vaulted.add(plaintext);
}

/** True when `value` came from an inline `!vault` scalar (ansible-core's `is vault_encrypted`). */
export function wasVaulted(value: unknown): boolean {
  return typeof value === 'string' && vaulted.has(value);
}
