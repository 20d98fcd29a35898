/**
 * Values of an Ansible INI inventory, read as ansible-core does: `ast.literal_eval` of the text,
 * else the text itself. Python literals: strings (quoted, adjacent ones joined), integers and
 * floats (signs, `_`, hex/octal/binary), `True`/`False`/`None`, lists, tuples (also unbracketed
 * `1, 2`), dicts and sets (as lists). Anything else (`true`, `a b`, `inf`, names) stays a string.
 */

type Value = unknown;

class Fail extends Error {}

class PyParser {
  private i = 0;
  constructor(private readonly s: string) {}

  private ws(): void {
    while (this.i < this.s.length && /\s/.test(this.s[this.i] as string)) this.i++;
  }

  private peek(): string {
    this.ws();
    return this.s[this.i] ?? '';
  }

  private eat(ch: string): boolean {
    if (this.peek() !== ch) return false;
    this.i++;
    return true;
  }

  /** The whole text as one literal (a top-level `a, b` is a tuple). */
  parseAll(): Value {
    const first = this.value();
    let v: Value = first;
    if (this.peek() === ',') {
      const items = [first];
      while (this.eat(',')) {
        if (this.peek() === '') break;
        items.push(this.value());
      }
      v = items;
    }
    if (this.peek() !== '') throw new Fail();
    return v;
  }

  private seq(close: string): Value[] {
    const out: Value[] = [];
    while (!this.eat(close)) {
      out.push(this.value());
      if (!this.eat(',')) {
        if (!this.eat(close)) throw new Fail();
        break;
      }
    }
    return out;
  }

  private value(): Value {
    const c = this.peek();
    if (c === '[') {
      this.i++;
      return this.seq(']');
    }
    if (c === '(') {
      this.i++;
      const start = this.i;
      if (this.eat(')')) return [];
      const first = this.value();
      if (this.eat(')')) return first; // parentheses, not a tuple
      this.i = start;
      return this.seq(')');
    }
    if (c === '{') {
      this.i++;
      if (this.eat('}')) return {};
      const k = this.value();
      if (this.eat(':')) {
        const out: Record<string, Value> = {};
        let key = k;
        for (;;) {
          if (typeof key !== 'string' && typeof key !== 'number' && typeof key !== 'boolean' && key !== null) throw new Fail();
          Object.defineProperty(out, String(key), { value: this.value(), enumerable: true, writable: true, configurable: true });
          if (!this.eat(',') || this.peek() === '}') break;
          key = this.value();
          if (!this.eat(':')) throw new Fail();
        }
        if (!this.eat('}')) throw new Fail();
        return out;
      }
      const items = [k];
      while (this.eat(',')) {
        if (this.peek() === '}') break;
        items.push(this.value());
      }
      if (!this.eat('}')) throw new Fail();
      return [...new Set(items)];
    }
    if (c === "'" || c === '"') {
      let out = '';
      while (this.peek() === "'" || this.peek() === '"') out += this.str();
      return out;
    }
    return this.atom();
  }

  private str(): string {
    const q = this.s[this.i] as string;
    const triple = this.s.startsWith(q.repeat(3), this.i);
    const end = triple ? q.repeat(3) : q;
    this.i += end.length;
    let out = '';
    const ESC: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '0': '\0', a: '\x07', b: '\b', f: '\f', v: '\v', '\n': '' };
    while (!this.s.startsWith(end, this.i)) {
      const ch = this.s[this.i];
      if (ch === undefined || (!triple && ch === '\n')) throw new Fail();
      if (ch === '\\') {
        const nx = this.s[this.i + 1] ?? '';
        if (nx in ESC) {
          out += ESC[nx];
          this.i += 2;
          continue;
        }
        const hex = /^x([0-9a-fA-F]{2})|^u([0-9a-fA-F]{4})/.exec(this.s.slice(this.i + 1));
        if (hex) {
          out += String.fromCodePoint(parseInt((hex[1] ?? hex[2]) as string, 16));
          this.i += 1 + hex[0].length;
          continue;
        }
        out += '\\';
        this.i++;
        continue;
      }
      out += ch;
      this.i++;
    }
    this.i += end.length;
    return out;
  }

  private atom(): Value {
    const rest = this.s.slice(this.i);
    const name = /^[A-Za-z_]\w*/.exec(rest);
    if (name) {
      this.i += name[0].length;
      if (name[0] === 'True') return true;
      if (name[0] === 'False') return false;
      if (name[0] === 'None') return null;
      throw new Fail();
    }
    const m = /^[+-]?(?:[0-9.][0-9_.]*[eE][+-]?\d+|[0-9.][0-9A-Za-z_.]*)/.exec(rest);
    if (!m) throw new Fail();
    this.i += m[0].length;
    const t = m[0];
    const body = t.replace(/^[+-]/, '');
    const sign = t.startsWith('-') ? -1 : 1;
    if (/_$|__|^_|[+-]_/.test(body) || /\._|_\./.test(body)) throw new Fail();
    const clean = body.replace(/_/g, '');
    let n: number;
    if (/^0[xX][0-9a-fA-F]+$/.test(clean)) n = parseInt(clean.slice(2), 16);
    else if (/^0[oO][0-7]+$/.test(clean)) n = parseInt(clean.slice(2), 8);
    else if (/^0[bB][01]+$/.test(clean)) n = parseInt(clean.slice(2), 2);
    else if (/^(0+|[1-9]\d*)$/.test(clean)) n = Number(clean);
    else if (/^(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$/.test(clean) && /[.eE]/.test(clean)) n = Number(clean);
    else throw new Fail();
    return sign * n;
  }
}

/** ansible-core's `_parse_value`: the Python literal `text` stands for, else `text` itself. */
export function parseIniValue(text: string): unknown {
  if (text.trim() === '') return text;
  try {
    return new PyParser(text).parseAll();
  } catch (e) {
    if (e instanceof Fail) return text;
    throw e;
  }
}
