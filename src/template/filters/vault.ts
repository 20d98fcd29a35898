/**
 * ansible.builtin's `vault` and `unvault` filters: encrypt a string into a vault text (format 1.2
 * with the id `filter_default` unless `vault_id` says otherwise, as ansible-core writes it) and
 * decrypt one with a password. The password and the plaintext `unvault` returns are secrets.
 */
import { isVaultText, UNDECRYPTABLE_FILTER, vaultDecrypt, vaultEncrypt, vaultSecrets } from '../../core/vault.js';
import type { FilterDef } from '../plugins.js';
import { ExprError, typeName, Undef, UndecryptableError, VaultMarker } from '../values.js';
import { opt, req } from './args.js';
import { filter, text } from './def.js';

/** The vault id the filters use when none is given. */
const FILTER_DEFAULT = 'filter_default';

/** `vault_id`, or the deprecated `vaultid` when `vault_id` was left at its default (ansible-core's rule). */
function vaultIdOf(vaultId: unknown, legacy: unknown): string {
  return legacy !== null && vaultId === FILTER_DEFAULT ? text(legacy) : text(vaultId);
}

/** The filters, by name. */
export const VAULT_FILTERS: Record<string, FilterDef> = {
  vault: filter({ fn: 'do_vault', params: [req('secret'), opt('salt'), opt('vault_id', FILTER_DEFAULT), opt('wrap_object', false), opt('vaultid')] }, (v, a, ctx) => {
    const secret = a.get('secret');
    if (typeof secret !== 'string') throw new ExprError(`Secret passed is required to be a string, instead we got <class '${typeName(secret)}'>.`);
    if (typeof v !== 'string') throw new ExprError(`Can only vault strings, instead we got <class '${typeName(v)}'>.`);
    ctx.addSecret(secret);
    ctx.addSecret(v);
    const salt = a.get('salt');
    try {
      return vaultEncrypt(v, Buffer.from(secret, 'utf8'), { vaultId: vaultIdOf(a.get('vault_id'), a.get('vaultid')), ...(salt !== null ? { salt: text(salt) } : {}) });
    } catch {
      throw new ExprError('Unable to encrypt.');
    }
  }),
  unvault: filter({ fn: 'do_unvault', params: [req('secret'), opt('vault_id', FILTER_DEFAULT), opt('vaultid')] }, (given, a, ctx) => {
    // as ansible-core: an undecryptable vault value is read as its ciphertext; any other marker (an undefined argument) is passed on
    const v = given instanceof VaultMarker ? given.ciphertext : given;
    const marker = [v, a.get('secret'), a.get('vault_id'), a.get('vaultid')].find((x) => x instanceof Undef);
    if (marker) return marker;
    const secret = a.get('secret');
    if (typeof secret !== 'string') throw new ExprError(`Secret passed is required to be as string, instead we got <class '${typeName(secret)}'>.`);
    if (typeof v !== 'string') throw new ExprError(`Vault should be in the form of a string, instead we got <class '${typeName(v)}'>.`);
    ctx.addSecret(secret);
    if (!isVaultText(v)) return v;
    let plain: string;
    try {
      plain = vaultDecrypt(v, [{ id: vaultIdOf(a.get('vault_id'), a.get('vaultid')), secret: Buffer.from(secret, 'utf8') }]).plaintext.toString('utf8');
    } catch {
      throw new ExprError('Unable to decrypt.');
    }
    ctx.addSecret(plain);
    return plain;
  }, true),
};

/**
 * The internal filter of an inline vault value that could not be decrypted (see
 * {@link UNDECRYPTABLE_FILTER}): the ciphertext becomes a {@link VaultMarker}, which fails with
 * the message where it is used (its error, an InputError, keeps its own message there).
 */
export const UNDECRYPTABLE: Record<string, FilterDef> = {
  [UNDECRYPTABLE_FILTER]: filter({ fn: 'vault_undecryptable', params: [req('message')] }, (v, a) => {
    const none = vaultSecrets().length === 0;
    const hint = none ? 'give the vault password: --vault-password-file FILE, --vault-id LABEL@SOURCE or --ask-vault-pass (or ANSIBLE_VAULT_PASSWORD_FILE)' : 'check the vault passwords given: --vault-id LABEL@SOURCE, --vault-password-file FILE, --ask-vault-pass';
    return new VaultMarker(new UndecryptableError(text(a.get('message')), text(v), hint));
  }),
};
