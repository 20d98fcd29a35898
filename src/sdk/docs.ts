/**
 * Module documentation generated from the module definition itself (schema descriptions,
 * defaults, examples): `kplay modules NAME` prints it, and `npm run schemas` writes the same
 * text into the README's module reference, so docs cannot drift from the code.
 */
import type { AnyModule, JsonSchema } from './module.js';

function typeOf(s: JsonSchema): string {
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(' \\| ');
  if (s.const !== undefined) return JSON.stringify(s.const);
  const alts = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined;
  if (Array.isArray(alts)) return [...new Set(alts.map(typeOf))].join(' \\| ');
  if (Array.isArray(s.type)) return s.type.join(' \\| ');
  if (s.type === 'array' && s.items && typeof s.items === 'object') return `list of ${typeOf(s.items as JsonSchema)}`;
  return typeof s.type === 'string' ? s.type : 'any';
}

function oneLine(s: unknown): string {
  return String(s ?? '').replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|').trim();
}

/** Markdown documentation of one module. `level` is the heading level of its title. */
export function moduleMarkdown(m: AnyModule, level = 3): string {
  const h = '#'.repeat(level);
  const props = (m.schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((m.schema.required ?? []) as string[]);
  const lines: string[] = [];
  lines.push(`${h} \`${m.name}\``, '', m.summary, '');
  if (m.description) lines.push(m.description.trim(), '');
  lines.push(`Check mode: ${m.checkMode === 'supported' ? 'supported' : 'not supported (skipped under --check)'}.${m.usesCluster ? ' Talks to the task\'s cluster.' : ''}${m.readOnly ? ' Read-only: never changes anything (takes no cluster lock).' : ''}${m.freeForm ? ` Free form: \`${m.name}: value\` sets \`${m.freeForm}\`.` : ''}`, '');
  if (Object.keys(props).length) {
    lines.push('| argument | type | required | default | description |', '|---|---|---|---|---|');
    for (const [name, p] of Object.entries(props)) {
      const def = p.default === undefined ? '' : `\`${JSON.stringify(p.default)}\``;
      lines.push(`| \`${name}\` | ${typeOf(p)} | ${required.has(name) ? 'yes' : ''} | ${def} | ${oneLine(p.description)} |`);
    }
    lines.push('');
  }
  for (const ex of m.examples) {
    lines.push(`${ex.title}:`, '', '```yaml', ex.yaml.trimEnd(), '```', '');
  }
  return lines.join('\n');
}

/** The README's module reference: every module, sorted. */
export function modulesReference(mods: AnyModule[]): string {
  return [...mods]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((m) => moduleMarkdown(m, 3))
    .join('\n');
}
