// Ansible Vault (#49): the 1.1/1.2 format against texts real `ansible-vault` 2.19 wrote (the
// byte-exact ones with ANSIBLE_VAULT_ENCRYPT_SALT=fixedsalt), the order secrets are tried in,
// `!vault` scalars and whole vault-encrypted files in the YAML loader, the vault filters and
// tests, and where the passwords come from (files, scripts, client scripts, prompts).
// test/parity/vault.test.ts runs the same against the real ansible-vault / ansible-playbook.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { scratch } from '../helpers/scratch.js';
import { isVaultText, setVaultSecrets, vaultDecrypt, vaultEncrypt, VaultError, wasVaulted } from '../../src/core/vault.js';
import { decryptFileData, loadYamlDoc, parseYaml } from '../../src/load/yaml.js';
import { InputError } from '../../src/load/errors.js';
import { readInventoryFile } from '../../src/inventory/document.js';
import { loadVaultSecrets, vaultIdSlugs } from '../../src/load/vault-ids.js';
import { FILTERS, TESTS } from '../../src/template/filters/index.js';
import type { PluginContext } from '../../src/template/plugins.js';
import { Undef } from '../../src/template/values.js';
import { templar } from '../../src/template/index.js';
import { lazyScope } from '../../src/executor/lazyvars.js';

const { root: tmp, write } = scratch('kplay-vault-');
afterEach(() => setVaultSecrets([]));

const pw1 = { id: 'default', secret: Buffer.from('pw1') };
const pw2dev = { id: 'dev', secret: Buffer.from('pw2') };

// written by ansible-vault 2.19: `encrypt --vault-password-file p1` (p1: "pw1") and `--vault-id dev@p2` (p2: "pw2\n")
const EMPTY_11 = '$ANSIBLE_VAULT;1.1;AES256\n61613063643964626431646631633936666338363837333634373666303964396565386437343637\n6165653061653430636438616364383032303930323464340a323737313736366661333164376538\n32623632613562633338353034613332666136356137303361646634373337613835303039343163\n6631333433346330370a306435313862373966396261386433643865646663633536346538653964\n3933\n';
const MULTI_12 = '$ANSIBLE_VAULT;1.2;AES256;dev\n61666335343338653361353764386637666239623561343066376233306133643137333331343334\n3037373130316234333634346432326238663763376438340a373230636566306166653032316237\n34623838666335663133323238326239303861653837326265623365323537616636303834316165\n3431386239373231360a336533306639386130623532376135306330313635303761393930373539\n66646239343832373565316632653032343736623534346565306531396432663836\n';
const UNI_11 = '$ANSIBLE_VAULT;1.1;AES256\n37333936323834653336393330346634376466643738393936316134303166353062663463326536\n3031616661363765376333623834613032626466333531650a393737373837663035633431653632\n32623436353630666637353233383332626630616366666635306633373537663664333837383761\n3037373235316566660a653465393164633464386663613638633738323461643330616534323331\n31326136366166366438313230656463316166643161386161333831633732363631\n';
const UNI_12 = '$ANSIBLE_VAULT;1.2;AES256;dev\n32313532613033393337633532323535633266396537643361633331373762343133383462636363\n3963653363376364626661663064656138306663666138660a353535306566393563643732323362\n63383939306262323031316463306530303961323432353535636436313237383739346261343730\n6637353365336631610a376231313863343434393361323663393665386137333834656435353239\n35613861353665383134653565666463616633353433343936376639356135656461\n';
// the same with ANSIBLE_VAULT_ENCRYPT_SALT=fixedsalt: byte-exact
const SALTED_11 = '$ANSIBLE_VAULT;1.1;AES256\n3636363937383635363437333631366337340a396165393463356334323434396338343465393130\n34323337626464666439343536393164383936373461373233366365653265343164356437633966\n3735300a316533376162316139333435336162343537343131613866383035363862376534623863\n65336235396439653030366565636638363730636237383235336339\n';
const SALTED_12 = '$ANSIBLE_VAULT;1.2;AES256;dev\n3636363937383635363437333631366337340a306633643336623463376137366238386134303735\n63343963313561643630313065343633373838323739653665323134643265663337646637303630\n3662390a313935323037636437653534636561333139396538383732326637376436636564633433\n32343336316433383263613163333239356562616438306634656663\n';
const UNICODE = 'ünïcødé ☃ 日本\n';

describe('the vault format, against ansible-vault', () => {
  it('decrypts what ansible-vault wrote: 1.1 and 1.2, empty, multi-line, unicode', () => {
    expect(vaultDecrypt(EMPTY_11, [pw1]).plaintext.toString()).toBe('');
    expect(vaultDecrypt(MULTI_12, [pw2dev])).toEqual({ plaintext: Buffer.from('line one\nline two\n'), vaultId: 'dev' });
    expect(vaultDecrypt(UNI_11, [pw1]).plaintext.toString('utf8')).toBe(UNICODE);
    expect(vaultDecrypt(UNI_12, [pw2dev]).plaintext.toString('utf8')).toBe(UNICODE);
  });

  it('encrypts byte for byte as ansible-vault does with the same salt (1.1 without an id, 1.2 with one)', () => {
    expect(vaultEncrypt('line one\nline two\n', Buffer.from('pw1'), { salt: 'fixedsalt' })).toBe(SALTED_11);
    expect(vaultEncrypt(UNICODE, Buffer.from('pw2'), { salt: 'fixedsalt', vaultId: 'dev' })).toBe(SALTED_12);
    // `default` is no id: format 1.1
    expect(vaultEncrypt('x', Buffer.from('pw1'), { salt: 'fixedsalt', vaultId: 'default' }).split('\n')[0]).toBe('$ANSIBLE_VAULT;1.1;AES256');
  });

  it('a random salt each time; every line at most 80 characters; round trips', () => {
    const a = vaultEncrypt('same', Buffer.from('k'));
    const b = vaultEncrypt('same', Buffer.from('k'));
    expect(a).not.toBe(b);
    expect(a.split('\n').every((l) => l.length <= 80)).toBe(true);
    for (const plain of ['', 'x', 'a'.repeat(16), 'a'.repeat(1000), UNICODE]) expect(vaultDecrypt(vaultEncrypt(plain, Buffer.from('k')), [{ id: 'default', secret: Buffer.from('k') }]).plaintext.toString('utf8')).toBe(plain);
  });

  it('refuses to encrypt a vault text again', () => {
    expect(() => vaultEncrypt(UNI_11, Buffer.from('k'))).toThrow('input is already encrypted');
  });

  it('tries the secret of the named id first, then every other one; ansible-core messages otherwise', () => {
    const wrongDev = { id: 'dev', secret: Buffer.from('nope') };
    expect(vaultDecrypt(MULTI_12, [pw1, pw2dev]).vaultId).toBe('dev');
    // the id in the header is only a hint: another id's password opens it
    expect(vaultDecrypt(MULTI_12, [wrongDev, { id: 'other', secret: Buffer.from('pw2') }]).vaultId).toBe('other');
    // ANSIBLE_VAULT_ID_MATCH: only the named id
    expect(() => vaultDecrypt(MULTI_12, [{ id: 'other', secret: Buffer.from('pw2') }], { idMatch: true })).toThrow('Decryption failed (no vault secrets were found that could decrypt).');
    expect(() => vaultDecrypt(UNI_11, [])).toThrow('Attempting to decrypt but no vault secrets found.');
    expect(() => vaultDecrypt(UNI_11, [wrongDev])).toThrow(VaultError);
    expect(() => vaultDecrypt('$ANSIBLE_VAULT;1.1;AES256\nzz\n', [pw1])).toThrow('Vault format unhexlify error.');
    expect(() => vaultDecrypt('$ANSIBLE_VAULT;1.1;AES512\n6162\n', [pw1])).toThrow("Cipher 'AES512' could not be found.");
    expect(isVaultText(UNI_11)).toBe(true);
    expect(isVaultText('plain')).toBe(false);
  });
});

describe('vault in the YAML loader', () => {
  const inline = (text: string, indent = '  '): string => `|\n${text.trimEnd().split('\n').map((l) => indent + l).join('\n')}\n`;

  it('an inline !vault scalar is its plaintext, a secret, and vault_encrypted', () => {
    setVaultSecrets([pw2dev]);
    const { docs, secrets } = parseYaml(`plain: x\nuni: !vault ${inline(UNI_12)}list:\n  - !vault ${inline(MULTI_12, '    ')}`, 'v.yml');
    expect(docs[0]).toEqual({ plain: 'x', uni: UNICODE, list: ['line one\nline two\n'] });
    expect(secrets).toEqual([UNICODE, 'line one\nline two\n']);
    expect(wasVaulted(UNICODE)).toBe(true);
    expect(wasVaulted('x')).toBe(false);
  });

  it('a !vault scalar without any vault secret loads (ansible-core 2.19): it fails where it is used; unvault and is vault_encrypted read it', async () => {
    const { docs, secrets } = parseYaml(`a: 1\nb: !vault |\n  ${UNI_12.trimEnd().split('\n').join('\n  ')}\n`, 'v.yml');
    expect(secrets).toEqual([]);
    const b = (docs[0] as { b: string }).b;
    await expect(templar.render(b, {})).rejects.toThrow('Attempt to use undecryptable variable: Attempting to decrypt but no vault secrets found. (v.yml)');
    // as a variable (rendered when read, as the executor's variables are)
    await expect(templar.render('{{ b | default("x") }}', lazyScope({ b }))).rejects.toThrow('Attempt to use undecryptable variable');
    expect(await templar.render('{{ b is vault_encrypted }}', lazyScope({ b }))).toBe(true);
    expect(await templar.render("{{ b | unvault('pw2', vault_id='dev') }}", lazyScope({ b }))).toBe(UNICODE);
  });

  it('a !vault scalar none of the given passwords opens fails where it is used, with ansible-core\'s message', async () => {
    setVaultSecrets([pw1]);
    const { docs, secrets } = parseYaml(`a: 1\nb: !vault |\n  ${UNI_12.trimEnd().split('\n').join('\n  ')}\n`, 'v.yml');
    expect(secrets).toEqual([]);
    const b = (docs[0] as { b: string }).b;
    await expect(templar.render(b, {})).rejects.toThrow('Attempt to use undecryptable variable: Decryption failed (no vault secrets were found that could decrypt). (v.yml)');
    await expect(templar.render(b, {})).rejects.toThrow(InputError);
  });

  it('a whole vault-encrypted YAML file: decrypted, every value in it a secret', async () => {
    setVaultSecrets([pw1]);
    const file = write('vars.yml', vaultEncrypt('db_password: hunter22\nport: 5432\nnested: {token: abcdef}\n', Buffer.from('pw1'), { vaultId: 'prod' }));
    const { value, secrets } = await loadYamlDoc(file);
    expect(value).toEqual({ db_password: 'hunter22', port: 5432, nested: { token: 'abcdef' } });
    expect(secrets).toEqual(expect.arrayContaining(['hunter22', '5432', 'abcdef']));
    setVaultSecrets([]);
    await expect(loadYamlDoc(file)).rejects.toThrow(`Attempting to decrypt but no vault secrets found on ${file}`);
  });

  it('a vault-encrypted INI inventory: decrypted, its values secrets', async () => {
    setVaultSecrets([pw1]);
    const file = write('hosts.ini', vaultEncrypt('[web]\nw1 api_key=ini-secret-value\n', Buffer.from('pw1')));
    const { doc, secrets } = await readInventoryFile(file);
    expect(doc).toMatchObject({ web: { hosts: { w1: { api_key: 'ini-secret-value' } } } });
    expect(secrets).toContain('ini-secret-value');
  });

  it('other files (file lookup, copy src, templates): decrypted bytes, and said to be vaulted', () => {
    setVaultSecrets([pw1]);
    expect(decryptFileData(Buffer.from(UNI_11), 'f')).toEqual({ data: Buffer.from(UNICODE), vaulted: true });
    expect(decryptFileData(Buffer.from('plain'), 'f')).toEqual({ data: Buffer.from('plain'), vaulted: false });
  });
});

describe('the vault and unvault filters, the vault_encrypted test', () => {
  const added: string[] = [];
  const ctx: PluginContext = { variable: (n) => new Undef(`'${n}' is undefined`, n), variableNames: () => [], render: (t) => t, searchPaths: [tmp], fileRoots: [tmp], env: {}, addSecret: (v) => void added.push(v) };
  const f = (name: string, value: unknown, args: unknown[], kwargs = {}): unknown => {
    const def = FILTERS.get(name);
    if (!def) throw new Error(`no filter ${name}`);
    return def.fn(value, args, kwargs, ctx);
  };

  it('vault: format 1.2 with the id filter_default (or vault_id), a salt when given', () => {
    const v = f('vault', 'data', ['pw']) as string;
    expect(v.split('\n')[0]).toBe('$ANSIBLE_VAULT;1.2;AES256;filter_default');
    expect((f('ansible.builtin.vault', 'data', ['pw'], { vault_id: 'ops' }) as string).split('\n')[0]).toBe('$ANSIBLE_VAULT;1.2;AES256;ops');
    expect(f('vault', 'line one\nline two\n', ['pw1'], { salt: 'fixedsalt', vault_id: 'default' })).toBe(SALTED_11);
    expect(f('unvault', v, ['pw'])).toBe('data');
    expect(added).toEqual(expect.arrayContaining(['pw', 'data']));
  });

  it('unvault: a vault text with the password, anything else as it is; ansible-core errors', () => {
    expect(f('unvault', UNI_12, ['pw2'])).toBe(UNICODE);
    expect(f('unvault', 'plain', ['pw2'])).toBe('plain');
    expect(() => f('unvault', UNI_12, ['wrong'])).toThrow('Unable to decrypt.');
    expect(() => f('unvault', UNI_12, [3])).toThrow("Secret passed is required to be as string, instead we got <class 'int'>.");
    expect(() => f('vault', 3, ['pw'])).toThrow("Can only vault strings, instead we got <class 'int'>.");
  });

  it('vault_encrypted: true for an inline !vault value only (not for a vault text string), as ansible-core 2.19', () => {
    setVaultSecrets([pw1]);
    const { docs } = parseYaml(`v: !vault |\n  ${UNI_11.trimEnd().split('\n').join('\n  ')}\n`, 'x.yml');
    const t = TESTS.get('vault_encrypted');
    expect(t?.fn((docs[0] as { v: string }).v, [], {}, ctx)).toBe(true);
    expect(t?.fn(UNI_11, [], {}, ctx)).toBe(false);
    expect(t?.fn('plain', [], {}, ctx)).toBe(false);
  });
});

describe('vault password sources, as ansible-core gathers them', () => {
  const noAsk = (): Promise<string> => Promise.reject(new Error('no prompt expected'));
  const warnings: string[] = [];
  const warn = (m: string): void => void warnings.push(m);

  it('the order: ANSIBLE_VAULT_IDENTITY_LIST, --vault-id, --vault-password-file, the configured file, then the prompt', () => {
    expect(vaultIdSlugs({ cwd: tmp, identityList: ['a@fa'], vaultIds: ['b@fb', 'fc'], passwordFiles: ['pf'], configPasswordFile: 'cf', askVaultPass: true })).toEqual(['a@fa', 'b@fb', 'fc', 'default@pf', 'default@cf', 'default@prompt_ask_vault_pass']);
    expect(vaultIdSlugs({ cwd: tmp, passwordFiles: ['pf'], defaultId: 'mine' })).toEqual(['mine@pf']);
  });

  it('a file (stripped), a script (its stdout), a client script (given --vault-id), a vault-encrypted password file, a prompt', async () => {
    write('plain.pass', '  pw1 \n\n');
    write('script.sh', '#!/bin/sh\necho from-script\n', 0o755);
    write('store-client.sh', '#!/bin/sh\n[ "$1" = --vault-id ] && echo "for-$2"\n', 0o755);
    write('wrapped.pass', vaultEncrypt('inner-pw\n', Buffer.from('pw1')));
    const questions: string[] = [];
    const ask = (q: string): Promise<string> => {
      questions.push(q);
      return Promise.resolve(` typed-${questions.length} `);
    };
    const secrets = await loadVaultSecrets({ cwd: tmp, vaultIds: ['plain.pass', 's@script.sh', 'prod@store-client.sh', 'w@wrapped.pass', 'dev@prompt'], askVaultPass: true }, ask, warn);
    expect(secrets.map((s) => [s.id, s.secret.toString()])).toEqual([
      ['default', 'pw1'],
      ['s', 'from-script'],
      ['prod', 'for-prod'],
      ['w', 'inner-pw'],
      ['dev', 'typed-1'],
      ['default', 'typed-2'],
    ]);
    expect(questions).toEqual(['Vault password (dev): ', 'Vault password: ']);
  });

  it('a source that fails is a warning while another works, the error when none does', async () => {
    write('good.pass', 'pw1\n');
    write('client-fails-client', '#!/bin/sh\necho nothing for "$2" >&2\nexit 2\n', 0o755);
    warnings.length = 0;
    const secrets = await loadVaultSecrets({ cwd: tmp, vaultIds: ['x@missing.pass', 'y@client-fails-client'], passwordFiles: ['good.pass'] }, noAsk, warn);
    expect(secrets.map((s) => s.id)).toEqual(['default']);
    expect(warnings).toEqual([
      `Error getting vault password file (x): The vault password file ${path.join(tmp, 'missing.pass')} was not found`,
      `Error in vault password file loading (y): Vault password client script ${path.join(tmp, 'client-fails-client')} did not find a secret for vault-id=y: nothing for y\n`,
    ]);
    await expect(loadVaultSecrets({ cwd: tmp, passwordFiles: ['missing.pass'] }, noAsk, warn)).rejects.toThrow(`The vault password file ${path.join(tmp, 'missing.pass')} was not found`);
    write('empty.pass', '\n');
    await expect(loadVaultSecrets({ cwd: tmp, passwordFiles: ['empty.pass'] }, noAsk, warn)).rejects.toThrow(`Invalid vault password was provided from file (${path.join(tmp, 'empty.pass')})`);
  });
});
