// The README's environment variables, exit codes and --forks default are generated from
// src/core (src/cli/readme-regions.ts, run by `npm run schemas`): the committed README holds what
// the tables say, and a stale or missing region is found.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { exitCodesMarkdown, fillReadmeRegions, settingsMarkdown } from '../../src/cli/readme-regions.js';
import { EXIT_CODES, type ExitName } from '../../src/core/exit.js';
import { DEFAULT_FORKS, SETTINGS, type SettingName } from '../../src/core/settings-table.js';

const readme = readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../README.md'), 'utf8');

describe('README regions', () => {
  it('the committed README is up to date with the tables', () => {
    expect(fillReadmeRegions(readme)).toEqual({ text: readme, missing: [] });
    expect(readme).toContain(exitCodesMarkdown());
    expect(readme).toContain(settingsMarkdown());
    expect(readme).toContain(`\`--forks\` (default <!-- forks-default:start -->${DEFAULT_FORKS}<!-- forks-default:end -->`);
  });

  it('document every exit code and every variable', () => {
    for (const n of Object.keys(EXIT_CODES) as ExitName[]) expect(exitCodesMarkdown()).toContain(`| ${EXIT_CODES[n].code} | `);
    for (const n of Object.keys(SETTINGS) as SettingName[]) expect(settingsMarkdown()).toContain(`| \`${SETTINGS[n].env}\` |`);
  });

  it('rewrite a stale region and name a missing one', () => {
    const text = 'a\n<!-- exit-codes:start (generated) -->\n\n| 0 | old |\n\n<!-- exit-codes:end -->\nb (default <!-- forks-default:start -->3<!-- forks-default:end -->)\n';
    const out = fillReadmeRegions(text);
    expect(out.missing).toEqual(['settings']);
    expect(out.text).toBe(`a\n<!-- exit-codes:start (generated) -->\n\n${exitCodesMarkdown()}\n\n<!-- exit-codes:end -->\nb (default <!-- forks-default:start -->${DEFAULT_FORKS}<!-- forks-default:end -->)\n`);
  });
});
