/** Reporters in a const map: `--output` picks one by name. */
import { ansibleReporter } from './ansible.js';
import { jsonReporter } from './json.js';
import { textReporter, type Reporter, type ReporterOptions } from './text.js';

export const REPORTERS = {
  text: textReporter,
  json: jsonReporter,
  ansible: ansibleReporter,
} as const satisfies Record<string, (o: ReporterOptions) => Reporter>;

export type OutputFormat = keyof typeof REPORTERS;

export function isOutputFormat(s: string): s is OutputFormat {
  return Object.hasOwn(REPORTERS, s);
}

export type { Reporter, ReporterOptions };
export type { AnsibleDisplay } from './text.js';
