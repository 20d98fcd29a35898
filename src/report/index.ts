/** Reporters in a const map: `--output` picks one by name. */
import { jsonReporter } from './json.js';
import { textReporter, type Reporter, type ReporterOptions } from './text.js';

export const REPORTERS = {
  text: textReporter,
  json: jsonReporter,
} as const satisfies Record<string, (o: ReporterOptions) => Reporter>;

export type OutputFormat = keyof typeof REPORTERS;

export function isOutputFormat(s: string): s is OutputFormat {
  return Object.hasOwn(REPORTERS, s);
}

export type { Reporter, ReporterOptions };
