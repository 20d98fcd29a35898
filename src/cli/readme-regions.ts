/**
 * The README's sections generated from kplay's own tables (`npm run schemas` writes them,
 * `schemas --check` fails when they are stale): the environment variables (src/core/settings-table.ts),
 * the exit codes (src/core/exit.ts) and the `--forks` default. Each lives between
 * `<!-- NAME:start … -->` and `<!-- NAME:end -->` markers; a block region keeps a blank line
 * inside each marker, an inline one (within a sentence) does not.
 */
import { EXIT_CODES, type ExitName } from '../core/exit.js';
import { DEFAULT_FORKS, SETTINGS, type SettingName } from '../core/settings-table.js';
import type { AnsibleName } from '../core/setting-spec.js';

/** A table cell: `|` escaped, on one line. */
const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The environment variables table. */
export function settingsMarkdown(): string {
  const rows = (Object.keys(SETTINGS) as SettingName[]).map((name) => {
    const s = SETTINGS[name];
    const def = s.defaultDoc ?? `\`${String(s.default)}\``;
    const a: AnsibleName<unknown> | undefined = s.ansible;
    const ansible = a ? `\`${a.name}\`: \`[${a.ini[0]}] ${a.ini[1]}\`${a.env === s.env ? '' : `, \`${a.env}\``}` : '';
    return `| \`${s.env}\` | ${ansible} | ${cell(s.type)} | ${cell(def)} | ${s.flag ? `\`${s.flag}\`` : ''} | ${cell(s.doc)} |`;
  });
  return ['| variable | Ansible name (ansible.cfg, variable) | value | default | flag (wins) | what it does |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

/** The exit codes table. */
export function exitCodesMarkdown(): string {
  const rows = (Object.keys(EXIT_CODES) as ExitName[]).map((n) => `| ${EXIT_CODES[n].code} | ${cell(EXIT_CODES[n].meaning)} |`);
  return ['| code | meaning |', '|---|---|', ...rows].join('\n');
}

/** The generated regions: name → content, and whether it sits inside a sentence. */
const REGIONS: { name: string; inline: boolean; content: () => string }[] = [
  { name: 'settings', inline: false, content: settingsMarkdown },
  { name: 'exit-codes', inline: false, content: exitCodesMarkdown },
  { name: 'forks-default', inline: true, content: () => String(DEFAULT_FORKS) },
];

/**
 * `readme` with every generated region rewritten; `missing` names the regions whose markers are
 * not there (left as they are).
 */
export function fillReadmeRegions(readme: string): { text: string; missing: string[] } {
  let text = readme;
  const missing: string[] = [];
  for (const r of REGIONS) {
    const start = text.indexOf(`<!-- ${r.name}:start`);
    const startEnd = start < 0 ? -1 : text.indexOf('-->', start) + 3;
    const end = text.indexOf(`<!-- ${r.name}:end -->`);
    if (start < 0 || startEnd < 3 || end < startEnd) {
      missing.push(r.name);
      continue;
    }
    const body = r.inline ? r.content() : `\n\n${r.content()}\n\n`;
    text = text.slice(0, startEnd) + body + text.slice(end);
  }
  return { text, missing };
}
