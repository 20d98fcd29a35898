/**
 * `yaml.dump(value, Dumper=AnsibleDumper, …)` as ansible-core's `to_yaml`/`to_nice_yaml` run it:
 * PyYAML's SafeRepresenter (sorted keys, YAML 1.1 implicit types, flow style for collections of
 * scalars when `default_flow_style=None`) and the libyaml emitter's layout (indentless sequences
 * in mappings, scalar style choice, line folding at `width`), ported to produce the same text.
 *
 * Not reproduced: anchors/aliases for a dict or list that appears twice (PyYAML writes `&id001`;
 * kplay writes the value again), `canonical=True`.
 */
import { ExprError, PyFloat, Undef, UndefinedError, isMap, typeName } from '../values.js';
import { intStr } from '../pyrepr.js';
import { codePointCompare } from './pyjson.js';
import { pyFloatRepr } from './pynum.js';
import { resolvePlain } from '../../load/yaml11.js';

export { resolvePlain };

/** Options of {@link dumpYaml} (the keyword arguments of `yaml.dump` that make sense here). */
export interface YamlDumpOptions {
  /** Spaces per level (2..9; otherwise 2). */
  readonly indent?: number;
  /** Preferred line width (default 80). */
  readonly width?: number;
  /** `true`: all flow; `false`: all block; `null`: flow for collections of scalars only. */
  readonly defaultFlowStyle?: boolean | null;
  /** Sort mapping keys (default true). */
  readonly sortKeys?: boolean;
  /** Write non-ASCII characters as they are (default true for Ansible). */
  readonly allowUnicode?: boolean;
  /** Start the document with `---`. */
  readonly explicitStart?: boolean;
  /** End the document with `...`. */
  readonly explicitEnd?: boolean;
}

type Node =
  | { readonly kind: 'scalar'; readonly value: string; readonly plainImplicit: boolean; readonly quotedImplicit: boolean }
  | { readonly kind: 'seq'; readonly items: readonly Node[]; readonly flow: boolean }
  | { readonly kind: 'map'; readonly pairs: readonly (readonly [Node, Node])[]; readonly flow: boolean };

/** Whether a plain scalar would be read back as a string. */
export function plainIsString(v: string): boolean {
  return resolvePlain(v) === 'str';
}

function floatText(n: number): string {
  if (Number.isNaN(n)) return '.nan';
  if (n === Infinity) return '.inf';
  if (n === -Infinity) return '-.inf';
  const v = pyFloatRepr(n).toLowerCase();
  return !v.includes('.') && v.includes('e') ? v.replace('e', '.0e') : v;
}

function represent(v: unknown, flowDefault: boolean | null, sortKeys: boolean, depth: number): Node {
  if (depth > 500) throw new ExprError('the value is nested too deeply to dump as YAML');
  if (v instanceof Undef) throw new UndefinedError(v.message);
  const scalar = (value: string, str: boolean): Node => ({ kind: 'scalar', value, plainImplicit: str ? plainIsString(value) : true, quotedImplicit: str });
  if (v === null || v === undefined) return scalar('null', false);
  if (v === true) return scalar('true', false);
  if (v === false) return scalar('false', false);
  if (typeof v === 'string') return scalar(v, true);
  if (typeof v === 'number') return scalar(Number.isInteger(v) ? intStr(v) : floatText(v), false);
  if (typeof v === 'bigint') return scalar(String(v), false);
  if (v instanceof PyFloat) return scalar(floatText(v.value), false);
  if (Array.isArray(v)) {
    const items = v.map((x) => represent(x, flowDefault, sortKeys, depth + 1));
    const best = items.every((n) => n.kind === 'scalar');
    return { kind: 'seq', items, flow: flowDefault ?? best };
  }
  if (isMap(v)) {
    const keys = Object.keys(v);
    if (sortKeys) keys.sort(codePointCompare);
    const pairs = keys.map((k) => [represent(k, flowDefault, sortKeys, depth + 1), represent(v[k], flowDefault, sortKeys, depth + 1)] as const);
    const best = pairs.every(([a, b]) => a.kind === 'scalar' && b.kind === 'scalar');
    return { kind: 'map', pairs, flow: flowDefault ?? best };
  }
  throw new ExprError(`cannot represent an object: ${typeName(v)}`);
}

interface Analysis {
  readonly empty: boolean;
  readonly multiline: boolean;
  readonly allowFlowPlain: boolean;
  readonly allowBlockPlain: boolean;
  readonly allowSingleQuoted: boolean;
}

const BREAKS = '\n\x85\u2028\u2029';

/** libyaml's IS_PRINTABLE: what may appear unescaped (no tab, no NEL, nothing beyond the BMP). */
function printable(c: number): boolean {
  return c === 0x0a || (c >= 0x20 && c <= 0x7e) || (c >= 0xa0 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd && c !== 0xfeff);
}
const WHITESPACE_OR_END = '\0 \t\r\n\x85\u2028\u2029';

function analyze(scalar: string, allowUnicode: boolean): Analysis {
  if (!scalar) return { empty: true, multiline: false, allowFlowPlain: false, allowBlockPlain: true, allowSingleQuoted: true };
  const cs = [...scalar];
  let blockIndicators = false;
  let flowIndicators = false;
  let lineBreaks = false;
  let special = false;
  let leadingSpace = false;
  let leadingBreak = false;
  let trailingSpace = false;
  let trailingBreak = false;
  let breakSpace = false;
  let spaceBreak = false;
  if (scalar.startsWith('---') || scalar.startsWith('...')) {
    blockIndicators = true;
    flowIndicators = true;
  }
  let precededByWhitespace = true;
  let followedByWhitespace = cs.length === 1 || WHITESPACE_OR_END.includes(cs[1] ?? '');
  let previousSpace = false;
  let previousBreak = false;
  for (let index = 0; index < cs.length; index++) {
    const ch = cs[index] ?? '';
    if (index === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(ch)) {
        flowIndicators = true;
        blockIndicators = true;
      }
      if (ch === '?' || ch === ':') {
        flowIndicators = true;
        if (followedByWhitespace) blockIndicators = true;
      }
      if (ch === '-' && followedByWhitespace) {
        flowIndicators = true;
        blockIndicators = true;
      }
    } else {
      if (',?[]{}'.includes(ch)) flowIndicators = true;
      if (ch === ':') {
        flowIndicators = true;
        if (followedByWhitespace) blockIndicators = true;
      }
      if (ch === '#' && precededByWhitespace) {
        flowIndicators = true;
        blockIndicators = true;
      }
    }
    if (BREAKS.includes(ch) || ch === '\r') lineBreaks = true;
    const c = ch.codePointAt(0) ?? 0;
    if (!printable(c) || (c > 0x7f && !allowUnicode)) special = true;
    if (ch === ' ') {
      if (index === 0) leadingSpace = true;
      if (index === cs.length - 1) trailingSpace = true;
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (BREAKS.includes(ch)) {
      if (index === 0) leadingBreak = true;
      if (index === cs.length - 1) trailingBreak = true;
      if (previousSpace) spaceBreak = true;
      previousSpace = false;
      previousBreak = true;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
    precededByWhitespace = WHITESPACE_OR_END.includes(ch);
    followedByWhitespace = index + 2 >= cs.length || WHITESPACE_OR_END.includes(cs[index + 2] ?? '');
  }
  let allowFlowPlain = true;
  let allowBlockPlain = true;
  let allowSingleQuoted = true;
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) allowFlowPlain = allowBlockPlain = false;
  if (breakSpace) allowFlowPlain = allowBlockPlain = allowSingleQuoted = false;
  if (spaceBreak || special) allowFlowPlain = allowBlockPlain = allowSingleQuoted = false;
  if (lineBreaks) allowFlowPlain = allowBlockPlain = false;
  if (flowIndicators) allowFlowPlain = false;
  if (blockIndicators) allowBlockPlain = false;
  return { empty: false, multiline: lineBreaks, allowFlowPlain, allowBlockPlain, allowSingleQuoted };
}

const ESCAPES: Readonly<Record<string, string>> = {
  '\0': '0', '\x07': 'a', '\x08': 'b', '\x09': 't', '\x0a': 'n', '\x0b': 'v', '\x0c': 'f', '\x0d': 'r', '\x1b': 'e',
  '"': '"', '\\': '\\', '\x85': 'N', '\xa0': '_', '\u2028': 'L', '\u2029': 'P',
};

/** The emitter: a port of PyYAML/libyaml's writer state and its node handlers (recursive instead of event-driven). */
class Emitter {
  out = '';
  column = 0;
  whitespace = true;
  indention = true;
  indent: number | null = null;
  readonly indents: (number | null)[] = [];
  flowLevel = 0;
  rootContext = false;
  sequenceContext = false;
  mappingContext = false;
  simpleKeyContext = false;

  constructor(
    readonly bestIndent: number,
    readonly bestWidth: number,
    readonly allowUnicode: boolean,
  ) {}

  write(data: string): void {
    this.out += data;
    this.column += [...data].length;
  }

  writeIndicator(indicator: string, needWhitespace: boolean, whitespace = false, indention = false): void {
    const data = this.whitespace || !needWhitespace ? indicator : ` ${indicator}`;
    this.whitespace = whitespace;
    this.indention = this.indention && indention;
    this.write(data);
  }

  writeIndent(): void {
    const indent = this.indent ?? 0;
    if (!this.indention || this.column > indent || (this.column === indent && !this.whitespace)) this.writeLineBreak();
    if (this.column < indent) {
      this.whitespace = true;
      this.write(' '.repeat(indent - this.column));
    }
  }

  writeLineBreak(data = '\n'): void {
    this.whitespace = true;
    this.indention = true;
    this.out += data;
    this.column = 0;
  }

  increaseIndent(flow: boolean, indentless = false): void {
    this.indents.push(this.indent);
    if (this.indent === null) this.indent = flow ? this.bestIndent : 0;
    else if (!indentless) this.indent += this.bestIndent;
  }

  popIndent(): void {
    this.indent = this.indents.pop() ?? null;
  }

  node(n: Node, ctx: { root?: boolean; sequence?: boolean; mapping?: boolean; simpleKey?: boolean }): void {
    this.rootContext = ctx.root === true;
    this.sequenceContext = ctx.sequence === true;
    this.mappingContext = ctx.mapping === true;
    this.simpleKeyContext = ctx.simpleKey === true;
    if (n.kind === 'scalar') {
      this.increaseIndent(true);
      this.scalar(n);
      this.popIndent();
    } else if (n.kind === 'seq') {
      if (this.flowLevel || n.flow || n.items.length === 0) this.flowSequence(n.items);
      else this.blockSequence(n.items);
    } else if (this.flowLevel || n.flow || n.pairs.length === 0) this.flowMapping(n.pairs);
    else this.blockMapping(n.pairs);
  }

  private simpleKey(n: Node): boolean {
    if (n.kind === 'seq') return n.items.length === 0;
    if (n.kind === 'map') return n.pairs.length === 0;
    const a = analyze(n.value, this.allowUnicode);
    return Buffer.byteLength(n.value, 'utf8') <= 128 && !a.multiline;
  }

  private flowSequence(items: readonly Node[]): void {
    this.writeIndicator('[', true, true);
    this.flowLevel++;
    this.increaseIndent(true);
    items.forEach((item, i) => {
      if (i > 0) this.writeIndicator(',', false);
      if (this.column > this.bestWidth) this.writeIndent();
      this.node(item, { sequence: true });
    });
    this.popIndent();
    this.flowLevel--;
    this.writeIndicator(']', false);
  }

  private flowMapping(pairs: readonly (readonly [Node, Node])[]): void {
    this.writeIndicator('{', true, true);
    this.flowLevel++;
    this.increaseIndent(true);
    pairs.forEach(([k, v], i) => {
      if (i > 0) this.writeIndicator(',', false);
      if (this.column > this.bestWidth) this.writeIndent();
      if (this.simpleKey(k)) {
        this.node(k, { mapping: true, simpleKey: true });
        this.writeIndicator(':', false);
      } else {
        this.writeIndicator('?', true);
        this.node(k, { mapping: true });
        if (this.column > this.bestWidth) this.writeIndent();
        this.writeIndicator(':', true);
      }
      this.node(v, { mapping: true });
    });
    this.popIndent();
    this.flowLevel--;
    this.writeIndicator('}', false);
  }

  private blockSequence(items: readonly Node[]): void {
    const indentless = this.mappingContext && !this.indention;
    this.increaseIndent(false, indentless);
    for (const item of items) {
      this.writeIndent();
      this.writeIndicator('-', true, false, true);
      this.node(item, { sequence: true });
    }
    this.popIndent();
  }

  private blockMapping(pairs: readonly (readonly [Node, Node])[]): void {
    this.increaseIndent(false);
    for (const [k, v] of pairs) {
      this.writeIndent();
      if (this.simpleKey(k)) {
        this.node(k, { mapping: true, simpleKey: true });
        this.writeIndicator(':', false);
      } else {
        this.writeIndicator('?', true, false, true);
        this.node(k, { mapping: true });
        this.writeIndent();
        this.writeIndicator(':', true, false, true);
      }
      this.node(v, { mapping: true });
    }
    this.popIndent();
  }

  private scalar(n: Extract<Node, { kind: 'scalar' }>): void {
    const a = analyze(n.value, this.allowUnicode);
    // libyaml's yaml_emitter_select_scalar_style
    let style: '' | "'" | '"' = '';
    if ((this.flowLevel && !a.allowFlowPlain) || (!this.flowLevel && !a.allowBlockPlain)) style = "'";
    if (a.empty && (this.flowLevel || this.simpleKeyContext)) style = "'";
    if (!n.plainImplicit) style = "'";
    if (style === "'" && !a.allowSingleQuoted) style = '"';
    const split = !this.simpleKeyContext;
    if (style === '"') this.doubleQuoted(n.value, split);
    else if (style === "'") this.singleQuoted(n.value, split);
    else this.plain(n.value, split);
  }

  private put(ch: string): void {
    this.out += ch;
    this.column++;
  }

  private putBreak(br = '\n'): void {
    this.out += br;
    this.column = 0;
  }

  private writeBreak(ch: string): void {
    this.putBreak(ch);
  }

  /** libyaml's yaml_emitter_write_indent (always leaves whitespace/indention set). */
  private indentLine(): void {
    this.writeIndent();
    this.whitespace = true;
    this.indention = true;
  }

  private plain(text: string, split: boolean): void {
    const cs = [...text];
    if (!this.whitespace && (cs.length > 0 || this.flowLevel)) this.put(' ');
    let spaces = false;
    let breaks = false;
    for (let i = 0; i < cs.length; i++) {
      const ch = cs[i] ?? '';
      if (ch === ' ') {
        if (split && !spaces && this.column > this.bestWidth && cs[i + 1] !== ' ') this.indentLine();
        else this.put(ch);
        spaces = true;
      } else if (BREAKS.includes(ch) || ch === '\r') {
        if (!breaks && ch === '\n') this.putBreak();
        this.writeBreak(ch);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.indentLine();
        this.put(ch);
        this.indention = false;
        spaces = false;
        breaks = false;
      }
    }
    this.whitespace = false;
    this.indention = false;
  }

  private singleQuoted(text: string, split: boolean): void {
    this.writeIndicator("'", true);
    const cs = [...text];
    let spaces = false;
    let breaks = false;
    for (let i = 0; i < cs.length; i++) {
      const ch = cs[i] ?? '';
      if (ch === ' ') {
        if (split && !spaces && this.column > this.bestWidth && i !== 0 && i !== cs.length - 1 && cs[i + 1] !== ' ') this.indentLine();
        else this.put(ch);
        spaces = true;
      } else if (BREAKS.includes(ch) || ch === '\r') {
        if (!breaks && ch === '\n') this.putBreak();
        this.writeBreak(ch);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.indentLine();
        if (ch === "'") this.put("'");
        this.put(ch);
        this.indention = false;
        spaces = false;
        breaks = false;
      }
    }
    if (breaks) this.indentLine();
    this.writeIndicator("'", false);
    this.whitespace = false;
    this.indention = false;
  }

  private doubleQuoted(text: string, split: boolean): void {
    this.writeIndicator('"', true);
    const cs = [...text];
    let spaces = false;
    for (let i = 0; i < cs.length; i++) {
      const ch = cs[i] ?? '';
      const c = ch.codePointAt(0) ?? 0;
      if (!printable(c) || (!this.allowUnicode && c > 0x7f) || c === 0xfeff || BREAKS.includes(ch) || ch === '\r' || ch === '"' || ch === '\\') {
        const e = ESCAPES[ch];
        const data =
          e !== undefined
            ? `\\${e}`
            : c <= 0xff
              ? `\\x${c.toString(16).toUpperCase().padStart(2, '0')}`
              : c <= 0xffff
                ? `\\u${c.toString(16).toUpperCase().padStart(4, '0')}`
                : `\\U${c.toString(16).toUpperCase().padStart(8, '0')}`;
        for (const d of data) this.put(d);
        spaces = false;
      } else if (ch === ' ') {
        if (split && !spaces && this.column > this.bestWidth && i !== 0 && i !== cs.length - 1) {
          this.indentLine();
          if (cs[i + 1] === ' ') this.put('\\');
        } else this.put(ch);
        spaces = true;
      } else {
        this.put(ch);
        spaces = false;
      }
    }
    this.writeIndicator('"', false);
    this.whitespace = false;
    this.indention = false;
  }
}

/** `yaml.dump(value, Dumper=AnsibleDumper, allow_unicode=True, …)`. */
export function dumpYaml(value: unknown, options: YamlDumpOptions = {}): string {
  const indent = options.indent !== undefined && options.indent > 1 && options.indent < 10 ? options.indent : 2;
  const width = options.width !== undefined && options.width > indent * 2 ? options.width : 80;
  const root = represent(value, options.defaultFlowStyle === undefined ? null : options.defaultFlowStyle, options.sortKeys ?? true, 0);
  const e = new Emitter(indent, width, options.allowUnicode ?? true);
  if (options.explicitStart) {
    e.writeIndicator('---', true);
  }
  e.node(root, { root: true });
  e.writeIndent();
  if (options.explicitEnd) {
    e.writeIndicator('...', true);
    e.writeIndent();
  }
  return e.out;
}
