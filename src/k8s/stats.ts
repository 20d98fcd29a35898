/**
 * Request statistics of a process's cluster clients: with `KPLAY_STATS_FILE` set, one JSON line
 * per client is appended to that file when the process exits (the benchmarks count requests so).
 */
import { setting } from '../core/settings.js';
import { appendFileSync } from 'node:fs';
import type { ClientStats } from './types.js';

/** What a client's statistics line says: its name, its server, its transport's counts. */
export interface StatsSource {
  readonly name: string;
  readonly server: string;
  readonly stats: ClientStats;
}

const statsClients: StatsSource[] = [];

/**
 * With `KPLAY_STATS_FILE` set, append one JSON line per cluster client
 * (`{"cluster", "server", "requests", "writes", "retries", …}`) to that file when the process exits.
 * Used by the benchmarks (test/bench) to count every request, reads included.
 */
export function recordStats(client: StatsSource): void {
  const file = setting('statsFile');
  if (!file) return;
  if (statsClients.length === 0) {
    process.on('exit', () => {
      const lines = statsClients.map((c) => JSON.stringify({ cluster: c.name, server: c.server, ...c.stats }) + '\n').join('');
      try {
        appendFileSync(file, lines);
      } catch {
        // statistics are best effort
      }
    });
  }
  statsClients.push(client);
}
