/**
 * The run report (`kplay report`): one run record as a page — the header (who, when, what, the
 * plan and its approvals, the outcome, whether the record chain verifies), a timeline of clusters
 * × tasks (batches, waits, drains and failures as bars), each task's result per cluster with its
 * masked diff on demand, the failures with what the rescue did, the recap, and the other runs of
 * the same playbook. Records are masked when written; the page shows nothing else.
 */
import type { BatchRecord, TaskRecord, WarningRecord } from '../records.js';
import type { ClusterStats } from '../events.js';
import type { GateRecord } from '../gate.js';
import { duration, esc } from './escape.js';
import { DETAIL_PANEL, htmlPage, type Detail, type PageData } from './page.js';
import { isRecord } from '../../core/shape.js';

/** Whether the record chain of the run's clusters verifies (`kplay history verify`). */
export interface ChainStatus {
  verified: boolean;
  /** What was checked (`local records in .kplay/runs`, `records in 3 clusters`). */
  checked: string;
  problems: string[];
}

/** Another run of the same playbook. */
export interface RelatedRun {
  run_id: string;
  started: string;
  exit_code: number;
  interrupted: boolean;
  /** Where its report is (relative), when it is not this one. */
  href?: string;
}

/** Everything the run report shows. */
export interface RunReportInput {
  /** The record's `run` header, as stored. */
  run: Record<string, unknown>;
  tasks: TaskRecord[];
  recap: Record<string, ClusterStats>;
  exit_code: number;
  interrupted: boolean;
  elapsed_ms?: number;
  batches?: BatchRecord[];
  warnings?: WarningRecord[];
  chain: ChainStatus;
  /** Where the record was read (`.kplay/runs/X.jsonl`, `the clusters a, b`). */
  source: string;
  related: RelatedRun[];
}

const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));
/** What an exit code means (the table of the README). */
export function outcomeText(code: number, interrupted: boolean): { text: string; cls: string } {
  if (interrupted) return { text: `interrupted (exit ${code})`, cls: 'failed' };
  if (code === 0) return { text: 'success (exit 0)', cls: 'ok' };
  if (code === 4) return { text: 'unreachable clusters (exit 4)', cls: 'unreachable' };
  return { text: `failed (exit ${code})`, cls: 'failed' };
}

/** A task result placed on the timeline. */
interface Placed {
  t: TaskRecord;
  start: number;
  /** Index of its detail (its cluster × task group). */
  detail: number;
  rescued: boolean;
}

/** Characters of diffs (as JSON) a page embeds at most: the rest stays in the record. */
const DIFF_BUDGET = 1024 * 1024;

const taskKey = (t: TaskRecord): string => `${t.play ?? ''}\u0000${t.task}`;

/** The status class of a result. */
function statusClass(t: TaskRecord, rescued: boolean): string {
  if (t.status === 'failed' && t.ignored) return 'ignored';
  if (t.status === 'failed' && rescued) return 'rescued';
  return t.status;
}

/** The worst status of some results, for a grid cell. */
function worst(list: Placed[]): string {
  for (const s of ['failed', 'unreachable', 'rescued', 'ignored', 'changed', 'ok', 'skipped']) if (list.some((p) => statusClass(p.t, p.rescued) === s)) return s === 'rescued' ? 'failed' : s;
  return 'ok';
}

/**
 * The results that ran after a failure on the same cluster in the same play: a rescue (and the
 * `always` section) when the recap counts the cluster as rescued.
 */
function afterFailure(tasks: TaskRecord[], i: number): TaskRecord[] {
  const f = tasks[i];
  if (!f) return [];
  const out: TaskRecord[] = [];
  for (let j = i + 1; j < tasks.length; j++) {
    const t = tasks[j];
    if (!t || t.cluster !== f.cluster) continue;
    if (t.play !== f.play) break;
    out.push(t);
  }
  return out;
}

function headerHtml(r: RunReportInput): string {
  const h = r.run;
  const git = isRecord(h.git) ? `${str(h.git.commit).slice(0, 12)}${h.git.dirty === true ? ' (uncommitted changes)' : ''} — ${str(h.git.author)}` : 'not in a git work tree';
  const plan = isRecord(h.plan)
    ? `${esc(str(h.plan.file))} <code>sha256:${esc(str(h.plan.digest).slice(0, 16))}…</code>${h.plan.replan === true ? ' (replanned)' : ''}<br>${
        Array.isArray(h.plan.approvals) && h.plan.approvals.length
          ? h.plan.approvals
              .filter(isRecord)
              .map((a) => `approved by ${esc(str(a.by))} at ${esc(str(a.at))}${a.comment ? ` (${esc(str(a.comment))})` : ''}`)
              .join('<br>')
          : 'no approvals'
      }`
    : 'none (the playbook ran as it was)';
  const out = outcomeText(r.exit_code, r.interrupted);
  const list = (v: unknown): string => (Array.isArray(v) && v.length ? v.map(str).join(', ') : '—');
  const rows: [string, string][] = [
    ['run', `<code>${esc(str(h.run_id))}</code>${h.check === true ? ' (check mode)' : ''}${h.resumed_from ? ` resuming <code>${esc(str(h.resumed_from))}</code>` : ''}`],
    ['outcome', `<span class="badge s-${out.cls}" id="outcome">${esc(out.text)}</span>`],
    ['who', esc(`${str(h.user)}@${str(h.host)}`)],
    ['when', `${esc(str(h.started))} → ${esc(str(h.finished) || 'unfinished')}${r.elapsed_ms !== undefined ? ` (${esc(duration(r.elapsed_ms))})` : ''}`],
    ['playbook', esc(str(h.playbook))],
    ['inventory', `${esc(str(h.inventory))}${h.limit ? ` (limit ${esc(str(h.limit))})` : ''}`],
    ['git commit', esc(git)],
    ['plan', plan],
    ['tags', esc(`${list(h.tags)}${Array.isArray(h.skip_tags) && h.skip_tags.length ? `; skipped: ${list(h.skip_tags)}` : ''}`)],
    ['extra vars', `${esc(list(h.extra_var_names))} <span class="mute">(names only: values are never recorded)</span>`],
    [
      'record chain',
      `<span id="chain" class="${r.chain.verified ? 'ok-text' : 'bad-text'}">${r.chain.verified ? 'verifies' : 'DOES NOT VERIFY'}</span> <span class="mute">(${esc(r.chain.checked)})</span>${r.chain.problems.map((p) => `<br>! ${esc(p)}`).join('')}`,
    ],
    ['source', esc(r.source)],
  ];
  return `<h1>kplay run report: ${esc(str(h.playbook).split('/').pop() ?? '')}</h1><dl class="kv">${rows.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${v}</dd>`).join('')}</dl>`;
}

function recapHtml(r: RunReportInput, clusters: string[]): string {
  const cols = ['ok', 'changed', 'unreachable', 'failed', 'skipped', 'rescued', 'ignored'] as const;
  const rows = clusters.map((c) => {
    const s = r.recap[c];
    return `<tr data-cluster="${esc(c)}"><td>${esc(c)}</td>${cols.map((k) => `<td class="n">${s ? s[k] : ''}</td>`).join('')}</tr>`;
  });
  return `<h2>Recap</h2><table id="recap"><thead><tr><th>cluster</th>${cols.map((c) => `<th>${c}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function timelineHtml(r: RunReportInput, clusters: string[], placed: Placed[], estimated: boolean): string {
  const end = Math.max(1, r.elapsed_ms ?? 0, ...placed.map((p) => p.start + p.t.duration_ms));
  const pct = (ms: number): string => `${((100 * ms) / end).toFixed(3)}%`;
  const marks = (r.batches ?? [])
    .filter((b) => b.batches > 1)
    .map((b) => `<div class="batch-mark" style="left:${pct(b.start_ms)}"><span>${esc(`batch ${b.batch}/${b.batches}`)}</span></div>`)
    .join('');
  const rows = clusters.map((c) => {
    const bars = placed
      .filter((p) => p.t.cluster === c && p.t.status !== 'skipped')
      .map((p) => {
        const t = p.t;
        const cls = ['bar', `s-${statusClass(t, p.rescued)}`, t.retries || t.waited_on ? 'wait' : '', t.module === 'lb_switch' || /\bdrain/i.test(t.task) ? 'drain' : ''].filter(Boolean).join(' ');
        const title = `${t.task}${t.item !== undefined ? ` (${t.item})` : ''}: ${statusClass(t, p.rescued)}, ${duration(t.duration_ms)}${t.retries ? `, ${t.retries} retries` : ''}${t.waited_on ? `, waited: ${t.waited_on}` : ''}`;
        return `<div class="${cls}" style="left:${pct(p.start)};width:${pct(t.duration_ms)}" data-detail="${p.detail}" data-start="${p.start}" title="${esc(title)}"></div>`;
      })
      .join('');
    return `<div class="tl-row" data-cluster="${esc(c)}"><div class="tl-name" title="${esc(c)}">${esc(c)}</div><div class="tl-track">${bars}</div></div>`;
  });
  const legend = ['ok', 'changed', 'failed', 'rescued', 'ignored', 'unreachable']
    .map((s) => `<span><i class="s-${s}"></i>${s}</span>`)
    .concat(['<span><i class="s-ok" style="background-image:repeating-linear-gradient(45deg,rgba(255,255,255,.5) 0 3px,transparent 3px 6px)"></i>waited / retried</span>', '<span><i class="s-drain"></i>drain (lb_switch)</span>'])
    .join('');
  return `<h2>Timeline</h2><p class="legend" style="margin-bottom:22px">${legend}</p>${estimated ? '<p class="mute">This record holds no start times (written by an older kplay): each cluster\'s tasks are placed one after the other from their durations.</p>' : ''}<div class="timeline" id="timeline"><div style="position:absolute;left:180px;right:0;top:0;bottom:0;pointer-events:none">${marks}</div>${rows.join('')}</div><div class="tl-axis"><span>0</span><span>${esc(duration(end / 2))}</span><span>${esc(duration(end))}</span></div>`;
}

function gridHtml(clusters: string[], keys: { key: string; name: string }[], groups: Map<string, Placed[]>): string {
  const head = `<tr><th>cluster</th>${keys.map((k) => `<th class="task" title="${esc(k.name)}">${esc(k.name)}</th>`).join('')}</tr>`;
  const rows = clusters.map((c) => {
    const cells = keys.map((k) => {
      const list = groups.get(`${c}\u0001${k.key}`);
      const first = list?.[0];
      if (!list || !first) return '<td class="cell none"></td>';
      const s = worst(list);
      const diff = list.some((p) => p.t.diff_text !== undefined) ? ' has-diff' : '';
      return `<td class="cell s-${s}${diff}" data-detail="${first.detail}" data-status="${s}" title="${esc(`${c} — ${k.name}: ${s}${list.length > 1 ? ` (${list.length} results)` : ''}`)}"></td>`;
    });
    return `<tr data-cluster="${esc(c)}"><td>${esc(c)}</td>${cells.join('')}</tr>`;
  });
  return `<h2>Results per cluster</h2><p class="mute">Click a cell (or a bar of the timeline) for the results, messages and diffs.</p><div style="overflow:auto"><table class="grid" id="results"><thead>${head}</thead><tbody>${rows.join('')}</tbody></table></div>${DETAIL_PANEL}`;
}

function failuresHtml(r: RunReportInput, placed: Placed[]): string {
  const items = placed.flatMap((p, i) => {
    const t = p.t;
    if ((t.status !== 'failed' && t.status !== 'unreachable') || t.ignored) return [];
    const after = p.rescued ? afterFailure(r.tasks, i) : [];
    const stats = r.recap[t.cluster];
    const end = stats ? (stats.failed > 0 || stats.unreachable > 0 ? 'the cluster ended failed' : 'the cluster ended without failure') : '';
    const rescue = p.rescued
      ? `<div>rescued — what ran on ${esc(t.cluster)} after the failure (the rescue, then the rest of the play):<ul>${after
          .slice(0, 12)
          .map((a) => `<li><span class="badge s-${esc(a.status)}">${esc(a.status)}</span> ${esc(a.task)}${a.msg ? ` — ${esc(a.msg)}` : ''}</li>`)
          .join('')}${after.length > 12 ? `<li>… ${after.length - 12} more</li>` : ''}</ul></div>`
      : '<div>not rescued: the cluster left the play</div>';
    return [`<div class="failure${p.rescued ? ' rescued' : ''}" data-cluster="${esc(t.cluster)}" data-task="${esc(t.task)}"><b>${esc(t.cluster)}</b> — ${esc(t.task)}${t.item !== undefined ? ` (item ${esc(t.item)})` : ''}: <span class="badge s-${esc(t.status)}">${esc(t.status.toUpperCase())}</span><pre>${esc(t.msg ?? '')}</pre>${rescue}<div class="mute">${esc(end)}</div></div>`];
  });
  return `<h2>Failures</h2>${items.length ? items.join('') : '<p>none</p>'}`;
}

const GATE_HEAD = ['time', 'metric', 'value', 'verdict', 'why'] as const;

/** The clock time of an ISO timestamp (`12:01:02.345Z`), or the text as it is. */
const clock = (at: string): string => (/^\d{4}-\d\d-\d\dT/.test(at) ? at.slice(11) : at);

/** A gate's measurements as table rows of text (the detail panel builds them with textContent). */
function gateRows(g: GateRecord): string[][] {
  return g.measurements.map((m) => [clock(m.at), m.metric, m.value, m.verdict, m.reason ?? '']);
}

const VERDICT_CLASS: Record<GateRecord['verdict'], string> = { successful: 'ok', failed: 'failed', inconclusive: 'skipped', error: 'failed' };

/** Every analysis gate of the run, per cluster (sorted): its verdict and a table of its measurements. */
function gatesHtml(r: RunReportInput): string {
  // by cluster (as every table of the page), each cluster's gates in the order they ran
  const gates = r.tasks.filter((t): t is TaskRecord & { gate: GateRecord } => t.gate !== undefined).sort((a, b) => (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0));
  if (!gates.length) return '';
  const items = gates.map((t) => {
    const g = t.gate;
    const rows = g.measurements
      .map((m) => `<tr class="m-${esc(m.verdict)}"><td title="${esc(m.at)}">${esc(clock(m.at))}</td><td>${esc(m.metric)}</td><td class="n">${esc(m.value)}</td><td><span class="badge s-${VERDICT_CLASS[m.verdict]}">${esc(m.verdict)}</span></td><td>${esc(m.reason ?? '')}</td></tr>`)
      .join('');
    const omitted = g.omitted ? `<p class="mute">${g.omitted} earlier measurement(s) not kept in the record</p>` : '';
    return `<div class="gate" data-cluster="${esc(t.cluster)}" data-task="${esc(t.task)}" data-verdict="${esc(g.verdict)}"><b>${esc(t.cluster)}</b> — ${esc(t.task)}: <span class="badge s-${VERDICT_CLASS[g.verdict]}">${esc(g.verdict)}</span>${omitted}<table class="measurements"><thead><tr>${GATE_HEAD.map((h) => `<th>${h}</th>`).join('')}</tr></thead><tbody>${rows}</tbody></table></div>`;
  });
  return `<h2>Analysis gates</h2><div id="gates">${items.join('')}</div>`;
}

function warningsHtml(r: RunReportInput): string {
  const w = r.warnings ?? [];
  if (!w.length) return '';
  return `<h2>Waits and warnings</h2><table id="warnings"><thead><tr><th>at</th><th>cluster</th><th>message</th></tr></thead><tbody>${w.map((x) => `<tr><td>${esc(duration(x.at_ms))}</td><td>${esc(x.cluster ?? '')}</td><td>${esc(x.msg)}</td></tr>`).join('')}</tbody></table>`;
}

function relatedHtml(r: RunReportInput): string {
  if (!r.related.length) return '';
  const rows = r.related.map((x) => {
    const o = outcomeText(x.exit_code, x.interrupted);
    const id = x.href ? `<a href="${esc(x.href)}">${esc(x.run_id)}</a>` : `<b>${esc(x.run_id)}</b> (this run)`;
    return `<tr><td>${id}</td><td>${esc(x.started)}</td><td><span class="badge s-${o.cls}">${esc(o.text)}</span></td></tr>`;
  });
  return `<h2>Runs of this playbook</h2><p class="mute">Links point at the report of each run next to this file (<code>kplay report RUN_ID</code> writes <code>kplay-report-RUN_ID.html</code>).</p><table id="related"><thead><tr><th>run</th><th>started</th><th>outcome</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** The run report page. */
export function renderRunReport(r: RunReportInput): string {
  const clusters = [...new Set([...Object.keys(r.recap), ...r.tasks.map((t) => t.cluster)])].sort();
  const estimated = r.tasks.some((t) => t.start_ms === undefined);
  const next = new Map<string, number>();
  const details: Detail[] = [];
  const diffs: string[] = [];
  const detailOf = new Map<string, number>();
  const groups = new Map<string, Placed[]>();
  const keys: { key: string; name: string }[] = [];
  const seenKeys = new Set<string>();
  const lastKey = new Map<string, string>();
  const diffIndex = new Map<string, number>();
  let diffBytes = 0;
  const placed: Placed[] = r.tasks.map((t, i) => {
    const start = estimated ? (next.get(t.cluster) ?? 0) : (t.start_ms ?? 0);
    next.set(t.cluster, start + t.duration_ms);
    const key = taskKey(t);
    if (!seenKeys.has(key)) {
      // a task first seen on this cluster goes right after this cluster's previous task (a rescue after its block)
      seenKeys.add(key);
      const prev = lastKey.get(t.cluster);
      const at = prev === undefined ? -1 : keys.findIndex((k) => k.key === prev);
      keys.splice(at === -1 ? keys.length : at + 1, 0, { key, name: t.task });
    }
    lastKey.set(t.cluster, key);
    const g = `${t.cluster}\u0001${key}`;
    let d = detailOf.get(g);
    if (d === undefined) {
      d = details.push({ title: `${t.cluster} — ${t.task}`, entries: [] }) - 1;
      detailOf.set(g, d);
    }
    const failed = (t.status === 'failed' || t.status === 'unreachable') && !t.ignored;
    const rescued = failed && (r.recap[t.cluster]?.rescued ?? 0) > 0 && afterFailure(r.tasks, i).length > 0;
    const lines: [string, string][] = [['cluster', t.cluster]];
    if (t.play !== undefined) lines.push(['play', `${t.play}${t.batch !== undefined ? ` (batch ${t.batch})` : ''}`]);
    if (t.module) lines.push(['module', t.module]);
    if (t.start_ms !== undefined) lines.push(['started', `+${duration(t.start_ms)}`]);
    lines.push(['took', duration(t.duration_ms)]);
    if (t.retries) lines.push(['retries', String(t.retries)]);
    if (t.waited_on) lines.push(['waited on', t.waited_on]);
    if (t.msg) lines.push(['message', t.msg]);
    if (t.diff?.length) lines.push(['changed objects', t.diff.join(', ')]);
    if (rescued) lines.push(['rescue', 'the block\'s rescue handled this failure']);
    let diff: number | undefined;
    if (t.diff_text) {
      // the same diff on many clusters (one manifest, a fleet) is embedded once; beyond the budget, none
      diff = diffIndex.get(t.diff_text);
      const size = JSON.stringify(t.diff_text).length;
      if (diff === undefined && diffBytes + size <= DIFF_BUDGET) {
        diff = diffs.push(t.diff_text) - 1;
        diffIndex.set(t.diff_text, diff);
        diffBytes += size;
      } else if (diff === undefined) lines.push(['diff', `not embedded (a report keeps at most ${DIFF_BUDGET / 1024 / 1024} MB of diffs): kplay history show ${str(r.run.run_id)} has it`]);
    }
    if (t.gate) lines.push(['gate', `${t.gate.verdict} after ${t.gate.measurements.length + (t.gate.omitted ?? 0)} measurement(s)`]);
    const table = t.gate ? { head: [...GATE_HEAD], rows: gateRows(t.gate) } : undefined;
    details[d]?.entries.push({ head: `${t.task}${t.item !== undefined ? ` (item=${t.item})` : ''}`, status: statusClass(t, rescued), lines, ...(diff !== undefined ? { diff } : {}), ...(table ? { table } : {}) });
    const p: Placed = { t, start, detail: d, rescued };
    groups.set(g, [...(groups.get(g) ?? []), p]);
    return p;
  });
  const data: PageData = { kind: 'run', run: r.run, recap: r.recap, chain: r.chain, exit_code: r.exit_code, interrupted: r.interrupted, details, diffs };
  const main = [timelineHtml(r, clusters, placed, estimated), gridHtml(clusters, keys, groups), failuresHtml(r, placed), gatesHtml(r), recapHtml(r, clusters), warningsHtml(r), relatedHtml(r)].join('\n');
  return htmlPage({ title: `kplay run ${str(r.run.run_id)}`, header: headerHtml(r), main, data });
}
