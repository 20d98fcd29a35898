/**
 * ansible.builtin's `vault` and `unvault` filters: encrypt a string into a vault text (format 1.2
 * with the id `filter_default` unless `vault_id` says otherwise, as ansible-core writes it) and
 * decrypt one with a password. The password and the plaintext `unvault` returns are secrets.
 */
import { isVaultText, UNDECRYPTABLE_FILTER, vaultDecrypt, vaultEncrypt } from '../../core/vault.js';
import { InputError } from '../../load/errors.js';
import type { FilterDef } from '../plugins.js';
import { ExprError, typeName } from '../values.js';
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
  unvault: filter({ fn: 'do_unvault', params: [req('secret'), opt('vault_id', FILTER_DEFAULT), opt('vaultid')] }, (v, a, ctx) => {
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
  }),
};

/** The internal filter of an inline vault value that could not be decrypted (see {@link UNDECRYPTABLE_FILTER}): fails with its message. */
export const UNDECRYPTABLE: Record<string, FilterDef> = {
  [UNDECRYPTABLE_FILTER]: filter({ fn: 'vault_undecryptable', params: [] }, (v) => {
    // an InputError keeps its own message where the value is used (not the placeholder template's text)
    throw new InputError(text(v), undefined, 'check the vault passwords given: --vault-id LABEL@SOURCE, --vault-password-file FILE, --ask-vault-pass');
  }),
};
