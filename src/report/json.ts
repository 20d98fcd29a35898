/**
 * `--output json`: one JSON object per line per event (see `events.ts` for the schema). Stable:
 * fields are only ever added. Diffs are included as `{label, before, after}`.
 */
import type { RunEvent } from './events.js';
import type { Reporter, ReporterOptions } from './text.js';

export function jsonReporter(o: ReporterOptions): Reporter {
  return {
    handle(e: RunEvent): void {
      if (e.type === 'progress') return; // live progress is for humans
      if (e.type === 'log' && e.level === 'debug' && o.verbosity < 2) return;
      o.write(`${JSON.stringify(e)}\n`);
    },
    close(): void {},
  };
}
