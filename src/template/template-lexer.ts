/**
 * The template lexer: template text cut into text, `{{ … }}` outputs and `{% … %}` block tags, with
 * Jinja2's lexical rules as ansible-core configures them (comments and raw blocks resolved,
 * whitespace control, `trim_blocks`, one trailing newline dropped). ./template.ts parses the tokens.
 */
import { JINJA_DELIMITERS, type Delimiters } from '../core/delimiters.js';
import { ExprError } from './values.js';

export { JINJA_DELIMITERS, type Delimiters };

/** A raw token of template text. */
export type RawToken =
  | { kind: 'text'; text: string }
  | { kind: 'output'; src: string; at: number }
  | { kind: 'block'; name: string; args: string; argsAt: number; at: number };

/** An error at an offset of the template text. */
export class TemplateSyntaxError extends ExprError {}

/**
 * Find the end delimiter of a tag starting at `from`, skipping string literals; as Jinja's lexer,
 * the delimiter counts only outside brackets (`{{ {'a': {'b': 1}} }}`).
 */
export function findClose(text: string, from: number, close: string): number {
  let i = from;
  let depth = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '"' || ch === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== ch) j += text[j] === '\\' ? 2 : 1;
      i = j + 1;
      continue;
    }
    if (depth === 0 && text.startsWith(close, i)) return i;
    if (ch === '{' || ch === '[' || ch === '(') depth++;
    else if ((ch === '}' || ch === ']' || ch === ')') && depth > 0) depth--;
    i++;
  }
  return -1;
}

const escapeRe = (t: string): string => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Split template text into text, outputs and block tags (comments and raw blocks resolved). */
export function lex(text: string, d: Readonly<Delimiters>): RawToken[] {
  // the longest opener first, as Jinja's lexer tries them
  const OPENERS = new RegExp([d.variableStart, d.blockStart, d.commentStart].sort((a, b) => b.length - a.length).map(escapeRe).join('|'), 'g');
  const out: RawToken[] = [];
  let pos = 0;
  let trimNextLeading = false;
  let trimNextNewline = false;
  const pushText = (s: string): void => {
    if (trimNextLeading) s = s.replace(/^\s+/, '');
    else if (trimNextNewline) s = s.replace(/^\r?\n/, '');
    trimNextLeading = false;
    trimNextNewline = false;
    if (s !== '') out.push({ kind: 'text', text: s });
  };
  const trimPrevious = (): void => {
    const last = out[out.length - 1];
    if (last?.kind === 'text') {
      last.text = last.text.replace(/\s+$/, '');
      if (last.text === '') out.pop();
    }
  };
  for (;;) {
    OPENERS.lastIndex = pos;
    const m = OPENERS.exec(text);
    if (!m) {
      pushText(text.slice(pos));
      break;
    }
    const start = m.index;
    pushText(text.slice(pos, start));
    const kind = m[0] === d.variableStart ? 'output' : m[0] === d.blockStart ? 'tag' : 'comment';
    let inner = start + m[0].length;
    if (text[inner] === '-') {
      trimPrevious();
      inner++;
    } else if (text[inner] === '+') {
      inner++;
    }
    const close = kind === 'output' ? d.variableEnd : kind === 'tag' ? d.blockEnd : d.commentEnd;
    let end = kind === 'comment' ? text.indexOf(close, inner) : findClose(text, inner, close);
    // an unbalanced bracket inside: fall back to the first delimiter, so the parser reports the bracket
    if (end < 0 && kind !== 'comment') end = text.indexOf(close, inner);
    if (end < 0) throw new TemplateSyntaxError(`${kind} opened here is not closed with "${close}"`, start);
    let contentEnd = end;
    let trimAfter = false;
    let keepNewline = false;
    if (text[end - 1] === '-' && end - 1 >= inner) {
      trimAfter = true;
      contentEnd = end - 1;
    } else if (text[end - 1] === '+' && end - 1 >= inner && kind !== 'output') {
      keepNewline = true;
      contentEnd = end - 1;
    }
    pos = end + close.length;
    if (kind === 'output') {
      out.push({ kind: 'output', src: text.slice(inner, contentEnd), at: inner });
      trimNextLeading = trimAfter;
      continue;
    }
    trimNextLeading = trimAfter;
    trimNextNewline = !trimAfter && !keepNewline;
    if (kind === 'comment') continue;
    const content = text.slice(inner, contentEnd);
    const nm = /^\s*([A-Za-z_#][\w]*)?/.exec(content);
    const name = nm?.[1] ?? '';
    if (name === '') throw new TemplateSyntaxError(`a tag needs a name, e.g. ${d.blockStart} if … ${d.blockEnd}`, start);
    const argsAt = inner + (nm?.[0].length ?? 0);
    if (name === 'raw') {
      // everything up to {% endraw %} is text
      const endRaw = new RegExp(`${escapeRe(d.blockStart)}(-?)\\s*endraw\\s*(-?)${escapeRe(d.blockEnd)}`, 'g');
      endRaw.lastIndex = pos;
      const e = endRaw.exec(text);
      if (!e) throw new TemplateSyntaxError('{% raw %} is not closed with {% endraw %}', start);
      let body = text.slice(pos, e.index);
      if (trimAfter) body = body.replace(/^\s+/, '');
      else body = body.replace(/^\r?\n/, '');
      if (e[1] === '-') body = body.replace(/\s+$/, '');
      if (body !== '') out.push({ kind: 'text', text: body });
      pos = e.index + e[0].length;
      trimNextLeading = e[2] === '-';
      trimNextNewline = e[2] !== '-';
      continue;
    }
    if (name === '#' ) continue; // Liquid's inline comment {% # … %}
    out.push({ kind: 'block', name, args: content.slice(nm?.[0].length ?? 0), argsAt, at: start });
  }
  // Jinja drops a single trailing newline (keep_trailing_newline is off in ansible-core; the
  // engine puts trailing newlines back on a string result, see trailingNewlines)
  const last = out[out.length - 1];
  if (last?.kind === 'text') {
    last.text = last.text.replace(/\r?\n$/, '');
    if (last.text === '') out.pop();
  }
  return out;
}
