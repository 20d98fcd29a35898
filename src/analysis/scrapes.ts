/**
 * When a Prometheus query's data can exist: the gate must not judge a metric before Prometheus
 * has scraped its targets after the batch started, nor call "no data" final before a full scrape
 * interval has passed. Decided on Prometheus' own clock: its active targets (`/api/v1/targets`)
 * and the timestamps of their stored `up` samples (a query's series can come from any target, so
 * every active target counts: PromQL cannot be mapped to its targets in general).
 */
import { sleep } from '../core/sleep.js';
import type { ModuleContext } from '../core/module.js';
import { promGet, readPrometheus, type PrometheusArgs } from './prometheus.js';
import type { Reading } from './loop.js';

/** One active scrape target as the wait needs it. */
export interface ScrapeTarget {
  /** Its scrape URL, for messages. */
  url: string;
  /** Start of its last scrape (ms since the epoch, Prometheus' clock); 0 when never scraped. */
  lastScrapeMs: number;
  /** Its scrape interval in ms. */
  intervalMs: number;
  /** Its target labels (those of its `up` series), as a key: sorted `name=value` pairs. */
  key: string;
}

/** The key of a label set: its sorted `name="value"` pairs, without `__name__`. */
export function labelKey(labels: unknown): string {
  if (typeof labels !== 'object' || labels === null) return '';
  return Object.entries(labels)
    .filter(([k]) => k !== '__name__')
    .map(([k, v]) => `${k}=${JSON.stringify(String(v))}`)
    .sort()
    .join(',');
}

/**
 * The stored scrapes of a `timestamp(up)` answer: per target key, the timestamp (ms) of its last
 * `up` sample. `up` is committed with the scrape's samples, so a scrape listed here is queryable
 * (a target's `lastScrape` is reported before its samples are stored).
 */
export function storedScrapes(body: unknown): Map<string, number> | undefined {
  const b = typeof body === 'object' && body !== null ? (body as { status?: unknown; data?: { resultType?: unknown; result?: unknown } }) : {};
  if (b.status !== 'success' || b.data?.resultType !== 'vector' || !Array.isArray(b.data.result)) return undefined;
  const out = new Map<string, number>();
  for (const r of b.data.result as unknown[]) {
    const x = typeof r === 'object' && r !== null ? (r as { metric?: unknown; value?: unknown }) : {};
    const sec = Array.isArray(x.value) ? Number(x.value[1]) : Number.NaN;
    if (Number.isFinite(sec)) out.set(labelKey(x.metric), Math.round(sec * 1000));
  }
  return out;
}

/** A Prometheus duration (`15s`, `1m30s`, `500ms`) in ms, or undefined. */
export function promDurationMs(s: unknown): number | undefined {
  if (typeof s !== 'string' || !/^(\d+(ms|s|m|h|d|w|y))+$/.test(s)) return undefined;
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_536_000_000 };
  let ms = 0;
  for (const m of s.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)) ms += Number(m[1]) * (unit[m[2] ?? ''] ?? 0);
  return ms;
}

/** The active targets of a `/api/v1/targets` answer, or why it has none we can use. */
export function scrapeTargets(body: unknown): ScrapeTarget[] | string {
  const data = typeof body === 'object' && body !== null ? (body as { status?: unknown; data?: { activeTargets?: unknown } }) : {};
  if (data.status !== 'success' || !Array.isArray(data.data?.activeTargets)) return 'its /api/v1/targets answer has no active targets list (not a Prometheus server with scrape targets?)';
  const out: ScrapeTarget[] = [];
  for (const t of data.data.activeTargets as unknown[]) {
    if (typeof t !== 'object' || t === null) continue;
    const x = t as { scrapeUrl?: unknown; lastScrape?: unknown; scrapeInterval?: unknown; labels?: unknown };
    const last = typeof x.lastScrape === 'string' ? Date.parse(x.lastScrape) : Number.NaN;
    out.push({ url: String(x.scrapeUrl ?? '?'), lastScrapeMs: Number.isFinite(last) && last > 0 ? last : 0, intervalMs: promDurationMs(x.scrapeInterval) ?? 60_000, key: labelKey(x.labels) });
  }
  return out;
}

/** Where one Prometheus metric of a gate is in its wait for data (one per metric, kept across measurements). */
export interface ScrapeWatch {
  /** When the batch started (ms): the first measurement waits for a scrape of every target after it. */
  sinceMs: number;
  /** When the gate started (ms): "no data" is final once every target was scraped a full interval after it. */
  gateStartMs: number;
  /** The waits give up at this time (ms): the end of the gate's window, at least MIN_WAIT_MS after its start. */
  deadlineMs: number;
  /** The first scrape after the batch started has been waited for. */
  first: boolean;
  /** A full scrape interval after the gate started has been waited for. */
  full: boolean;
  /** What the last wait waited for (for the reason of a "no data" measurement). */
  note?: string;
}

/** The shortest wait bound: a Prometheus that just started discovers its targets within seconds. */
export const MIN_WAIT_MS = 30_000;

/** A fresh watch: the batch start, the gate start and the gate's window (the waits end at it, or after MIN_WAIT_MS when it is shorter). */
export function scrapeWatch(since: Date, gateStart: Date, windowMs: number): ScrapeWatch {
  return { sinceMs: since.getTime(), gateStartMs: gateStart.getTime(), deadlineMs: gateStart.getTime() + Math.max(windowMs, MIN_WAIT_MS), first: false, full: false };
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** How long after its start a Prometheus without scrape targets may still be discovering them. */
const DISCOVERY_MS = 60_000;

/** Did the server start less than DISCOVERY_MS ago (`/api/v1/status/runtimeinfo`)? False when it cannot say. */
async function justStarted(p: PrometheusArgs, ctx: ModuleContext): Promise<boolean> {
  const got = await promGet(p, ctx, '/api/v1/status/runtimeinfo');
  const body = got.ok && typeof got.body === 'object' && got.body !== null ? (got.body as { data?: { startTime?: unknown } }) : {};
  const start = typeof body.data?.startTime === 'string' ? Date.parse(body.data.startTime) : Number.NaN;
  return Number.isFinite(start) && Date.now() - start < DISCOVERY_MS;
}

/**
 * Poll the targets until every one satisfies `ok`, the gate's window ends or the run is
 * interrupted; returns what was waited for and how it ended.
 */
async function waitForTargets(p: PrometheusArgs, ctx: ModuleContext, w: ScrapeWatch, what: string, ok: (t: ScrapeTarget) => boolean): Promise<string> {
  const t0 = Date.now();
  for (;;) {
    const got = await promGet(p, ctx, '/api/v1/targets?state=active');
    const listed = got.ok ? scrapeTargets(got.body) : got.reason;
    if (typeof listed === 'string') return `did not wait for ${what}: ${listed}`;
    // a scrape counts once its samples are stored (its `up` sample), not when it is reported
    const up = listed.length > 0 ? await promGet(p, ctx, `/api/v1/query?query=${encodeURIComponent('timestamp(up)')}`) : undefined;
    const stored = up?.ok ? storedScrapes(up.body) : undefined;
    const targets = stored ? listed.map((t) => ({ ...t, lastScrapeMs: Math.min(t.lastScrapeMs, stored.get(t.key) ?? 0) })) : listed;
    // a Prometheus that just started has no targets for a few seconds (service discovery); one
    // that has run for a while without any is fed otherwise (remote write): nothing to wait for
    if (targets.length === 0 && !(await justStarted(p, ctx))) return `did not wait for ${what}: Prometheus has no active scrape targets`;
    const behind = targets.filter((t) => !ok(t));
    if (targets.length > 0 && behind.length === 0) return `waited ${seconds(Date.now() - t0)} for ${what} (${targets.length} target(s))`;
    const now = Date.now();
    if (now >= w.deadlineMs) {
      const names = targets.length === 0 ? 'Prometheus has no active scrape targets yet' : `not scraped: ${behind.slice(0, 3).map((t) => t.url).join(', ')}${behind.length > 3 ? ', …' : ''}`;
      return `waited ${seconds(now - t0)} for ${what}, up to the end of the gate's window (initial_delay + interval × count, at least ${MIN_WAIT_MS / 1000} s); ${names}`;
    }
    // the next scrape of the first target behind is due one interval after its last one
    const due = Math.min(now + 200, ...behind.map((t) => (t.lastScrapeMs > 0 ? t.lastScrapeMs + t.intervalMs : now + 200)));
    if (!(await sleep(Math.min(Math.max(due - now + 50, 100), 2000, Math.max(w.deadlineMs - now, 1)), ctx.signal))) return `interrupted while waiting for ${what}`;
  }
}

/**
 * Read a Prometheus metric of a gate: the first reading waits for Prometheus to have scraped
 * every target after the batch started; a reading without data is final only once every target
 * was also scraped a full scrape interval after the gate started (else it waits and reads again).
 * Both waits end at the gate's window; a "no data" reason says what was waited for.
 */
export async function readPrometheusWatched(p: PrometheusArgs, ctx: ModuleContext, w: ScrapeWatch): Promise<Reading> {
  if (!w.first) {
    w.first = true;
    w.note = await waitForTargets(p, ctx, w, "Prometheus' first scrape of every target after the batch started", (t) => t.lastScrapeMs > w.sinceMs);
    ctx.log.info(`analysis: ${w.note}`);
  }
  let r = await readPrometheus(p, ctx);
  if (r.kind === 'no_data' && !w.full) {
    w.full = true;
    w.note = await waitForTargets(p, ctx, w, 'a scrape of every target a full scrape interval after the gate started', (t) => t.lastScrapeMs >= w.gateStartMs + t.intervalMs);
    ctx.log.info(`analysis: ${w.note}`);
    r = await readPrometheus(p, ctx);
  }
  if (r.kind === 'value') {
    // data came: a later reading without it is a genuine no data, judged at once
    w.full = true;
    delete w.note;
  }
  return r.kind === 'no_data' && w.note !== undefined ? { kind: 'no_data', reason: `${r.reason} (${w.note})` } : r;
}
