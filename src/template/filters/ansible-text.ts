/**
 * ansible.builtin's text filters (ansible-core 2.19 `plugins/filter/core.py`): regular
 * expressions with Python's `re`, JSON and YAML, base64, hashes, shell quoting, `split`,
 * `comment`, `to_uuid`, `urlsplit`/`urldecode`.
 */
import { createHash, getHashes } from 'node:crypto';
import { parseAllDocuments, isAlias, isMap as isYamlMap, isScalar, isSeq, type Document, type Node as YamlNode, type Scalar } from 'yaml';
import { withoutBom } from '../../load/bom.js';
import type { FilterDef } from '../plugins.js';
import { ExprError, PyFloat, isMap, mkFloat, typeName } from '../values.js';
import { intArg, opt, req } from './args.js';
import { dict, filter, text } from './def.js';
import { dumps, loads } from './pyjson.js';
import { compile, findall, group, reEscape, search, subn } from './pyregex.js';
import { dumpYaml } from './pyyaml.js';
import { boolFromYaml, floatNumberFromYaml, intFromYaml, resolvePlain } from '../../load/yaml11.js';
import { split as pySplit } from './pytext.js';

function flags(ignorecase: unknown, multiline: unknown): { ignorecase: boolean; multiline: boolean } {
  return { ignorecase: Boolean(ignorecase), multiline: Boolean(multiline) };
}

function regexSearch(value: unknown, regex: unknown, args: readonly unknown[], kwargs: Readonly<Record<string, unknown>>): unknown {
  const s = text(value);
  const groups: (number | string)[] = [];
  for (const arg of args) {
    const a = text(arg);
    if (a.startsWith('\\g')) {
      const m = /^\\g<(\S+)>/.exec(a);
      if (!m) throw new ExprError("'NoneType' object has no attribute 'group'");
      groups.push(m[1] ?? '');
    } else if (a.startsWith('\\')) {
      const m = /^\\(\d+)/.exec(a);
      if (!m) throw new ExprError("'NoneType' object has no attribute 'group'");
      groups.push(Number(m[1]));
    } else throw new ExprError('Unknown argument');
  }
  const rx = compile(text(regex), flags(kwargs.ignorecase, kwargs.multiline));
  const m = search(rx, s);
  if (!m) return null;
  if (groups.length === 0) return group(m, 0);
  return groups.map((g) => group(m, g));
}

/** Python's `hashlib.new(name)` names that Node knows under another spelling. */
const HASH_ALIASES: Readonly<Record<string, string>> = { sha3_224: 'sha3-224', sha3_256: 'sha3-256', sha3_384: 'sha3-384', sha3_512: 'sha3-512', blake2b: 'blake2b512', blake2s: 'blake2s256' };

/** `hashlib.new(hashtype, data).hexdigest()`. */
export function pyHash(data: string, hashtype: string): string {
  const name = HASH_ALIASES[hashtype.toLowerCase()] ?? hashtype.toLowerCase();
  if (!getHashes().includes(name)) throw new ExprError(`unsupported hash type ${hashtype}`);
  return createHash(name).update(data, 'utf8').digest('hex');
}

/** `shlex.quote`. */
export function shellQuote(s: string): string {
  if (s === '') return "''";
  if (!/[^\w@%+=:,./-]/.test(s)) return s;
  return `'${s.replace(/'/g, `'"'"'`)}'`;
}

const B64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Python's codecs for the encodings playbooks pass to b64encode/b64decode. */
function codec(encoding: string): 'utf8' | 'utf16' | 'utf16le' | 'utf16be' | 'latin1' | 'ascii' {
  const e = encoding.toLowerCase().replace(/[-_ ]/g, '');
  if (e === 'utf8' || e === 'u8' || e === 'utf') return 'utf8';
  if (e === 'utf16' || e === 'u16') return 'utf16';
  if (e === 'utf16le') return 'utf16le';
  if (e === 'utf16be') return 'utf16be';
  if (e === 'latin1' || e === 'iso88591' || e === 'l1' || e === 'latin') return 'latin1';
  if (e === 'ascii' || e === 'usascii') return 'ascii';
  throw new ExprError(`unknown encoding: ${encoding}`, undefined, 'kplay knows utf-8, utf-16 (-le, -be), latin-1 and ascii');
}

function encodeText(s: string, encoding: string): Buffer {
  const c = codec(encoding);
  if (c === 'utf8') return Buffer.from(s, 'utf8');
  if (c === 'latin1' || c === 'ascii') {
    let pos = 0;
    for (const ch of s) {
      const cp = ch.codePointAt(0) ?? 0;
      if (cp > (c === 'ascii' ? 0x7f : 0xff)) {
        const shown = cp <= 0xff ? `\\x${cp.toString(16).padStart(2, '0')}` : cp <= 0xffff ? `\\u${cp.toString(16).padStart(4, '0')}` : `\\U${cp.toString(16).padStart(8, '0')}`;
        throw new ExprError(`'${c === 'ascii' ? 'ascii' : 'latin-1'}' codec can't encode character '${shown}' in position ${pos}: ordinal not in range(${c === 'ascii' ? 128 : 256})`);
      }
      pos++;
    }
    return Buffer.from(s, 'latin1');
  }
  const le = Buffer.from(s, 'utf16le');
  if (c === 'utf16le') return le;
  if (c === 'utf16be') return Buffer.from(le).swap16();
  return Buffer.concat([Buffer.from([0xff, 0xfe]), le]);
}

function decodeBytes(b: Buffer, encoding: string): string {
  const c = codec(encoding);
  if (c === 'utf8') return utf8SurrogateEscape(b);
  if (c === 'latin1') return b.toString('latin1');
  if (c === 'ascii') {
    const bad = b.findIndex((x) => x > 0x7f);
    if (bad >= 0) throw new ExprError(`'ascii' codec can't decode byte 0x${(b[bad] ?? 0).toString(16)} in position ${bad}: ordinal not in range(128)`);
    return b.toString('latin1');
  }
  if (b.length % 2 === 1) throw new ExprError(`'utf-16-le' codec can't decode byte 0x${(b[b.length - 1] ?? 0).toString(16)} in position ${b.length - 1}: truncated data`);
  if (c === 'utf16be') return Buffer.from(b).swap16().toString('utf16le');
  if (c === 'utf16' && b[0] === 0xfe && b[1] === 0xff) return Buffer.from(b.subarray(2)).swap16().toString('utf16le');
  return (c === 'utf16' && b[0] === 0xff && b[1] === 0xfe ? b.subarray(2) : b).toString('utf16le');
}

function b64bytes(s: string, urlsafe: boolean): Buffer {
  let t = s.replace(/[^A-Za-z0-9+/=_-]/g, '');
  if (urlsafe) t = t.replace(/-/g, '+').replace(/_/g, '/');
  else t = t.replace(/[-_]/g, '');
  const data = t.replace(/=+$/, '');
  if (data.length % 4 === 1) {
    throw new ExprError(`Invalid base64-encoded string: number of data characters (${data.length}) cannot be 1 more than a multiple of 4`);
  }
  if (!B64.test(t) || t.length % 4 !== 0) throw new ExprError('Incorrect padding');
  return Buffer.from(t, 'base64');
}

/** Python's `bytes.decode('utf-8', 'surrogateescape')`: invalid bytes become lone surrogates U+DC80..U+DCFF. */
export function utf8SurrogateEscape(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i] ?? 0;
    const need = b < 0x80 ? 0 : b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : -1;
    if (need === 0) {
      out += String.fromCharCode(b);
      i++;
      continue;
    }
    let ok = need > 0 && i + need < bytes.length;
    let cp = need === 1 ? b & 0x1f : need === 2 ? b & 0x0f : b & 0x07;
    for (let k = 1; ok && k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) ok = false;
      else cp = (cp << 6) | (c & 0x3f);
    }
    if (ok && ((need === 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (need === 3 && (cp < 0x10000 || cp > 0x10ffff)))) ok = false;
    if (ok) {
      out += String.fromCodePoint(cp);
      i += need + 1;
    } else {
      out += String.fromCharCode(0xdc00 + b);
      i++;
    }
  }
  return out;
}

function floatFromYaml(raw: string): number | PyFloat {
  const n = floatNumberFromYaml(raw);
  return Number.isFinite(n) ? mkFloat(n) : n;
}

/** PyYAML's SafeConstructor for a scalar: plain scalars through the YAML 1.1 implicit resolvers, explicit tags honoured. */
function scalarValue(node: Scalar): unknown {
  const raw = String(node.value);
  const tag = node.tag;
  const plain = node.type === 'PLAIN' || node.type === undefined;
  const kind = tag ? tag.replace(/^tag:yaml.org,2002:/, '').replace(/^!!/, '') : plain ? resolvePlain(raw) : 'str';
  switch (kind) {
    case 'null':
      return null;
    case 'bool':
      return boolFromYaml(raw);
    case 'int':
      return intFromYaml(raw);
    case 'float':
      return floatFromYaml(raw);
    case 'binary':
      return Buffer.from(raw.replace(/\s/g, ''), 'base64').toString('latin1');
    case 'merge':
      return '<<';
    default:
      return raw;
  }
}

function yamlValue(node: YamlNode | null | undefined, doc: Document, depth: number): unknown {
  if (depth > 500) throw new ExprError('YAML nested too deeply');
  if (node === null || node === undefined) return null;
  if (isAlias(node)) {
    const target = node.resolve(doc);
    return target ? yamlValue(target, doc, depth + 1) : null;
  }
  if (isScalar(node)) return scalarValue(node);
  if (isSeq(node)) return node.items.map((x) => yamlValue(x as YamlNode, doc, depth + 1));
  if (isYamlMap(node)) {
    const own: [string, unknown][] = [];
    const merged: [string, unknown][] = [];
    for (const pair of node.items) {
      const keyNode = pair.key as YamlNode | null;
      if (keyNode && isScalar(keyNode) && keyNode.type === 'PLAIN' && !keyNode.tag && resolvePlain(String(keyNode.value)) === 'merge') {
        const value = yamlValue(pair.value as YamlNode, doc, depth + 1);
        const maps = Array.isArray(value) ? value : [value];
        for (const m of maps) {
          if (!isMap(m)) throw new ExprError('while constructing a mapping: expected a mapping or list of mappings for merging');
        }
        // earlier maps in a merge list win over later ones
        for (const m of [...maps].reverse()) if (isMap(m)) merged.push(...Object.entries(m));
        continue;
      }
      const k = yamlValue(keyNode, doc, depth + 1);
      own.push([typeof k === 'string' ? k : text(k), yamlValue(pair.value as YamlNode, doc, depth + 1)]);
    }
    return dict([...merged, ...own]);
  }
  return null;
}

/** `yaml.load_all(text)` with YAML 1.1 types as PyYAML's SafeLoader reads them. */
export function loadYamlAll(s: string): unknown[] {
  // PyYAML skips a byte-order mark at the start (`lookup('file', 'saved-on-windows.yml') | from_yaml`)
  const docs = parseAllDocuments(withoutBom(s), { version: '1.1', schema: 'failsafe', merge: false, uniqueKeys: false });
  const list = Array.isArray(docs) ? docs : [docs];
  const out: unknown[] = [];
  for (const d of list) {
    const err = d.errors[0];
    if (err) throw new ExprError(err.message.split('\n')[0] ?? 'invalid YAML');
    out.push(yamlValue(d.contents as YamlNode | null, d, 0));
  }
  return out;
}

function jsonKw(kw: Readonly<Record<string, unknown>>, dflt: { indent?: unknown; sortKeys?: boolean; separators?: [string, string] }) {
  const known = new Set(['indent', 'sort_keys', 'ensure_ascii', 'separators', 'allow_nan', 'skipkeys', 'check_circular', 'vault_to_text', 'preprocess_unsafe', 'profile']);
  for (const k of Object.keys(kw)) if (!known.has(k)) throw new ExprError(`__init__() got an unexpected keyword argument '${k}'`);
  const indent = 'indent' in kw ? kw.indent : dflt.indent;
  const seps = kw.separators;
  return {
    indent: indent === null || indent === undefined ? null : typeof indent === 'string' ? indent : intArg(indent),
    sortKeys: 'sort_keys' in kw ? Boolean(kw.sort_keys) : (dflt.sortKeys ?? false),
    ensureAscii: 'ensure_ascii' in kw ? Boolean(kw.ensure_ascii) : true,
    allowNan: 'allow_nan' in kw ? Boolean(kw.allow_nan) : true,
    separators: dflt.separators ?? (Array.isArray(seps) && seps.length === 2 ? ([text(seps[0]), text(seps[1])] as [string, string]) : null),
  };
}

function yamlKw(kw: Readonly<Record<string, unknown>>, indentDefault: number | undefined, flowDefault: boolean | null) {
  if ('allow_unicode' in kw) throw new ExprError("yaml.dump() got multiple values for keyword argument 'allow_unicode'");
  const known = new Set(['indent', 'width', 'default_flow_style', 'sort_keys', 'explicit_start', 'explicit_end', 'default_style', 'line_break', 'canonical', 'encoding', 'version', 'tags']);
  for (const k of Object.keys(kw)) if (!known.has(k)) throw new ExprError(`dump_all() got an unexpected keyword argument '${k}'`);
  if (kw.canonical) throw new ExprError('to_yaml(canonical=True) is not supported by kplay');
  if (kw.default_style !== undefined && kw.default_style !== null) throw new ExprError('to_yaml(default_style=…) is not supported by kplay');
  const indent = 'indent' in kw && kw.indent !== null ? intArg(kw.indent) : indentDefault;
  const width = 'width' in kw && kw.width !== null ? (typeof kw.width === 'number' && !Number.isFinite(kw.width) ? Number.MAX_SAFE_INTEGER : intArg(kw.width)) : undefined;
  const dfs = 'default_flow_style' in kw ? kw.default_flow_style : flowDefault;
  return {
    indent,
    width,
    defaultFlowStyle: dfs === null || dfs === undefined ? null : Boolean(dfs),
    sortKeys: 'sort_keys' in kw ? Boolean(kw.sort_keys) : true,
    explicitStart: Boolean(kw.explicit_start),
    explicitEnd: Boolean(kw.explicit_end),
  };
}

/** Python's `uuid.uuid5(namespace, name)`. */
export function uuid5(namespace: string, name: string): string {
  const hex = namespace.replace(/[{}-]/g, '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) throw new ExprError(`Invalid value '${namespace}' for 'namespace': badly formed hexadecimal UUID string`);
  const h = createHash('sha1').update(Buffer.from(hex, 'hex')).update(name, 'utf8').digest();
  const b = Buffer.from(h.subarray(0, 16));
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x50;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const x = b.toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** Python's `urllib.parse.urlsplit` as Ansible's `urlsplit` filter returns it. */
function urlsplit(url: string): Record<string, unknown> {
  const m = /^(?:([A-Za-z][A-Za-z0-9+.-]*):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/s.exec(url);
  const [, scheme = '', netloc = '', path = '', query = '', fragment = ''] = m ?? [];
  const userinfo = netloc.includes('@') ? netloc.slice(0, netloc.lastIndexOf('@')) : null;
  const hostport = netloc.includes('@') ? netloc.slice(netloc.lastIndexOf('@') + 1) : netloc;
  const username = userinfo === null ? null : userinfo.split(':')[0] ?? '';
  const password = userinfo === null || !userinfo.includes(':') ? null : userinfo.slice(userinfo.indexOf(':') + 1);
  let hostname: string | null;
  let portText: string | undefined;
  const v6 = /^\[([^\]]*)\](?::(.*))?$/.exec(hostport);
  if (v6) {
    hostname = (v6[1] ?? '').toLowerCase();
    portText = v6[2];
  } else {
    const at = hostport.lastIndexOf(':');
    hostname = (at >= 0 ? hostport.slice(0, at) : hostport).toLowerCase();
    portText = at >= 0 ? hostport.slice(at + 1) : undefined;
  }
  if (hostname === '') hostname = null;
  let port: number | null = null;
  if (portText !== undefined && portText !== '') {
    if (!/^\d+$/.test(portText)) throw new ExprError(`Port could not be cast to integer value as '${portText}'`);
    port = Number(portText);
    if (port > 65535) throw new ExprError('Port out of range 0-65535');
  }
  return dict([
    ['fragment', fragment],
    ['hostname', hostname],
    ['netloc', netloc],
    ['password', password],
    ['path', path],
    ['port', port],
    ['query', query],
    ['scheme', scheme.toLowerCase()],
    ['username', username],
  ]);
}

/** `urllib.parse.unquote_plus`. */
function unquotePlus(s: string): string {
  const bytes: number[] = [];
  const t = s.replace(/\+/g, ' ');
  for (let i = 0; i < t.length; i++) {
    const m = /^%([0-9a-fA-F]{2})/.exec(t.slice(i));
    if (m) {
      bytes.push(parseInt(m[1] ?? '0', 16));
      i += 2;
    } else bytes.push(...Buffer.from(t[i] ?? '', 'utf8'));
  }
  return new TextDecoder('utf-8', { fatal: false }).decode(Uint8Array.from(bytes));
}

const COMMENT_STYLES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  plain: { decoration: '# ' },
  erlang: { decoration: '% ' },
  c: { decoration: '// ' },
  cblock: { beginning: '/*', decoration: ' * ', end: ' */' },
  xml: { beginning: '<!--', decoration: ' - ', end: '-->' },
};

function comment(textIn: string, style: string, kw: Readonly<Record<string, unknown>>): string {
  const styleParams = COMMENT_STYLES[style];
  if (!styleParams) throw new ExprError(`Invalid style '${style}'.`, undefined, `Available styles: ${Object.keys(COMMENT_STYLES).join(', ')}`);
  const prepostfix = 'decoration' in kw ? text(kw.decoration) : (styleParams.decoration ?? '');
  const p: Record<string, unknown> = {
    newline: '\n',
    beginning: '',
    prefix: prepostfix.trimEnd(),
    prefix_count: 1,
    decoration: '',
    postfix: prepostfix.trimEnd(),
    postfix_count: 1,
    end: '',
    ...styleParams,
    ...kw,
  };
  const nl = text(p.newline);
  const deco = text(p.decoration);
  const beginning = p.beginning ? `${text(p.beginning)}${nl}` : '';
  let prefix = '';
  if (p.prefix) prefix = (text(p.prefix) !== nl ? `${text(p.prefix)}${nl}` : nl).repeat(intArg(p.prefix_count));
  const body = `${deco}${textIn.split(nl).join(`${nl}${deco}`)}`.split(`${deco}${nl}`).join(`${deco.trimEnd()}${nl}`);
  const postfix = ['', ...Array<string>(intArg(p.postfix_count)).fill(text(p.postfix))].join(nl);
  const end = p.end ? `${nl}${text(p.end)}` : '';
  return beginning + prefix + body + postfix + end;
}

/** The text filters, by short name. */
export const ANSIBLE_TEXT_FILTERS: Readonly<Record<string, FilterDef>> = {
  regex_replace: filter(
    { fn: 'regex_replace', params: [opt('pattern', ''), opt('replacement', ''), opt('ignorecase', false), opt('multiline', false), opt('count', 0), opt('mandatory_count', 0)] },
    (v, a) => {
      const s = text(v);
      const pattern = text(a.get('pattern'));
      const rx = compile(pattern, flags(a.get('ignorecase'), a.get('multiline')));
      const count = intArg(a.get('count'));
      const [out, subs] = subn(rx, text(a.get('replacement')), s, count);
      const mandatory = intArg(a.get('mandatory_count'));
      if (mandatory && mandatory !== subs) throw new ExprError(`'${pattern}' should match ${mandatory} times, but matches ${count} times in '${s}'`);
      return out;
    },
  ),
  regex_search: filter({ fn: 'regex_search', params: [req('regex')], varargs: true, varkw: true }, (v, a) => regexSearch(v, a.get('regex'), a.rest, a.extra)),
  regex_findall: filter({ fn: 'regex_findall', params: [req('regex'), opt('multiline', false), opt('ignorecase', false)] }, (v, a) =>
    findall(compile(text(a.get('regex')), flags(a.get('ignorecase'), a.get('multiline'))), text(v)),
  ),
  regex_escape: filter({ fn: 'regex_escape', params: [opt('re_type', 'python')] }, (v, a) => {
    const s = text(v);
    const t = a.get('re_type');
    if (t === 'python') return reEscape(s);
    if (t === 'posix_basic') return s.replace(/([\].[^$*\\])/g, '\\$1');
    if (t === 'posix_extended') throw new ExprError(`Regex type (${text(t)}) not yet implemented`);
    throw new ExprError(`Invalid regex type (${text(t)})`);
  }),
  to_json: filter({ fn: 'to_json', params: [], varkw: true }, (v, a) => dumps(v, jsonKw(a.extra, {}))),
  to_nice_json: filter({ fn: 'to_nice_json', params: [opt('indent', 4), opt('sort_keys', true)], varkw: true }, (v, a) =>
    dumps(v, jsonKw({ ...a.extra, indent: a.get('indent'), sort_keys: a.get('sort_keys') }, { separators: [',', ': '] })),
  ),
  from_json: filter({ fn: 'from_json', params: [opt('profile')], varkw: true }, (v) => {
    if (typeof v !== 'string') throw new ExprError(`the JSON object must be str, bytes or bytearray, not ${typeName(v)}`);
    return loads(v);
  }),
  to_yaml: filter({ fn: 'to_yaml', params: [], varargs: true, varkw: true }, (v, a) => dumpYaml(v, yamlKw(a.extra, undefined, null))),
  to_nice_yaml: filter({ fn: 'to_nice_yaml', params: [opt('indent', 4)], varargs: true, varkw: true }, (v, a) =>
    dumpYaml(v, yamlKw({ ...a.extra, indent: a.get('indent') }, 4, false)),
  ),
  from_yaml: filter({ fn: 'from_yaml', params: [] }, (v) => {
    if (v === null) return null;
    if (typeof v !== 'string') return v;
    const docs = loadYamlAll(v);
    if (docs.length > 1) {
      const second = /^(?:---|\.\.\.)/m.exec(v.slice(1));
      const line = second ? v.slice(0, second.index + 1).split('\n').length : 2;
      throw new ExprError(`expected a single document in the stream\n  in "<unicode string>", line 1, column 1\nbut found another document\n  in "<unicode string>", line ${line}, column 1`);
    }
    return docs.length === 0 ? null : docs[0];
  }),
  from_yaml_all: filter({ fn: 'from_yaml_all', params: [] }, (v) => {
    if (v === null) return [];
    if (typeof v !== 'string') return v;
    return loadYamlAll(v);
  }),
  b64encode: filter({ fn: 'b64encode', params: [opt('encoding', 'utf-8'), opt('urlsafe', false)] }, (v, a) => {
    const b64 = encodeText(text(v), text(a.get('encoding'))).toString('base64');
    return a.get('urlsafe') ? b64.replace(/\+/g, '-').replace(/\//g, '_') : b64;
  }),
  b64decode: filter({ fn: 'b64decode', params: [opt('encoding', 'utf-8'), opt('urlsafe', false)] }, (v, a) =>
    decodeBytes(b64bytes(text(v), Boolean(a.get('urlsafe'))), text(a.get('encoding'))),
  ),
  hash: filter({ fn: 'get_hash', params: [opt('hashtype', 'sha1')] }, (v, a) => pyHash(text(v), text(a.get('hashtype')))),
  checksum: filter({ fn: 'checksum_s', params: [opt('hash_func')] }, (v) => pyHash(text(v), 'sha1')),
  sha1: filter({ fn: 'checksum_s', params: [opt('hash_func')] }, (v) => pyHash(text(v), 'sha1')),
  md5: filter({ fn: 'md5s', params: [] }, (v) => pyHash(text(v), 'md5')),
  quote: filter({ fn: 'quote', params: [] }, (v) => shellQuote(v === null ? '' : text(v))),
  split: filter({ fn: 'split', params: [opt('sep'), opt('maxsplit', -1)] }, (v, a) => {
    if (typeof v !== 'string') throw new ExprError(`descriptor 'split' for 'str' objects doesn't apply to a '${typeName(v)}' object`);
    const sep = a.get('sep');
    return pySplit(v, sep === null ? null : text(sep), intArg(a.get('maxsplit')));
  }),
  to_uuid: filter({ fn: 'to_uuid', params: [opt('namespace', '361E6D51-FAEC-444A-9079-341386DA8E2E')] }, (v, a) => uuid5(text(a.get('namespace')), text(v))),
  urlsplit: filter({ fn: 'split_url', params: [opt('query', ''), opt('alias', 'urlsplit')] }, (v, a) => {
    const parts = urlsplit(text(v));
    const q = a.get('query');
    if (q) {
      const key = text(q);
      if (!Object.prototype.hasOwnProperty.call(parts, key)) throw new ExprError(`${text(a.get('alias'))}: unknown URL component: ${key}`);
      return parts[key];
    }
    return parts;
  }),
  urldecode: filter({ fn: 'unquote_plus', params: [opt('encoding', 'utf-8'), opt('errors', 'replace')] }, (v) => unquotePlus(text(v))),
  comment: filter({ fn: 'comment', params: [opt('style', 'plain')], varkw: true }, (v, a) => comment(text(v), text(a.get('style')), a.extra)),
};

