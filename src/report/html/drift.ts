/**
 * The drift report as a page (`kplay drift --output html`): the fleet table (state, objects,
 * drifted, hidden, errors per cluster), then per cluster each drifted thing once with the tasks
 * that manage it, its fields (who changed them) and its masked diff on demand, the failed tasks,
 * and what rules hid.
 */
import type { ClusterReport } from '../drift-report.js';
import { unifiedDiff } from '../diff.js';
import { esc } from './escape.js';
import { htmlPage, type PageData } from './page.js';

/** What the page says about the check itself. */
export interface DriftMeta {
  playbook: string;
  inventory: string;
  /** When the check ran (ISO). */
  time: string;
  exit_code: number;
}

const stateClass = (s: ClusterReport['state']): string => s.replace(/ /g, '-');

/** The drift report page. */
export function renderDriftReport(reports: Map<string, ClusterReport>, meta: DriftMeta): string {
  const diffs: string[] = [];
  const all = [...reports];
  const drifted = all.filter(([, r]) => r.state !== 'in sync').length;
  const fleet = all.map(
    ([c, r]) =>
      `<tr data-cluster="${esc(c)}" data-state="${esc(r.state)}"><td><a href="#cluster-${esc(encodeURIComponent(c))}">${esc(c)}</a></td><td><span class="badge s-${stateClass(r.state)}">${esc(r.state)}</span></td><td class="n">${r.objects}</td><td class="n">${r.drifted_objects}</td><td class="n">${r.hidden.length}</td><td class="n">${r.errors.length}</td></tr>`,
  );
  const sections = all.map(([c, r]) => {
    const entries = r.drift.map((d) => {
      const text = d.diff.map((e) => unifiedDiff(e.before, e.after, e.label)).filter(Boolean).join('\n');
      const button = text ? `<button class="diff-toggle" data-diff="${diffs.push(text) - 1}">show diff</button>` : '';
      const msgs = [...new Set(d.tasks.flatMap((t) => (t.msg !== undefined ? [t.msg] : [])))];
      const fields = d.fields.map((f) => `<li><code>${esc(f.path)}</code> ${f.change === 'added' ? 'added' : 'changed'} by ${esc(f.manager ?? 'unknown manager')}${f.operation ? ` (${esc(f.operation)}${f.time ? `, ${esc(f.time)}` : ''})` : ''}${f.change === 'changed' ? (f.kplay_owns ? '; kplay still owns it' : '; kplay no longer owns it') : ''}</li>`);
      return `<div class="failure rescued drift-entry"><b>${esc(d.object)}</b>${d.action ? ` <span class="mute">(${esc(d.action)})</span>` : ''}<div class="mute">${d.tasks.length > 1 ? 'tasks' : 'task'}: ${esc(d.tasks.map((t) => `${t.task}${t.item !== undefined ? ` (item=${t.item})` : ''}`).join('; '))}</div>${msgs.map((m) => `<div>${esc(m)}</div>`).join('')}${fields.length ? `<ul>${fields.join('')}</ul>` : ''}${button}</div>`;
    });
    const errors = r.errors.map((p) => `<div class="failure"><b>${esc(p.task)}</b>: <span class="badge s-failed">${esc(p.status.toUpperCase())}</span><pre>${esc(p.msg ?? '')}</pre></div>`);
    const hidden = r.hidden.length ? `<details><summary>${r.hidden.length} field(s) hidden by rules</summary><ul>${r.hidden.map((h) => `<li>${esc(h.object)} <code>${esc(h.path)}</code> (${esc(h.change)} by ${esc(h.manager ?? 'unknown manager')}): ${esc(h.rule)}</li>`).join('')}</ul></details>` : '';
    return `<section class="cluster" id="cluster-${esc(encodeURIComponent(c))}" data-cluster="${esc(c)}"><h2>${esc(c)} <span class="badge s-${stateClass(r.state)}">${esc(r.state)}</span></h2>${entries.join('') || (r.errors.length ? '' : '<p>in sync: every managed object matches the playbook</p>')}${errors.join('')}${hidden}</section>`;
  });
  const header = `<h1>kplay drift report</h1><dl class="kv"><dt>playbook</dt><dd>${esc(meta.playbook)}</dd><dt>inventory</dt><dd>${esc(meta.inventory)}</dd><dt>checked</dt><dd>${esc(meta.time)}</dd><dt>outcome</dt><dd><span class="badge s-${meta.exit_code === 0 ? 'ok' : meta.exit_code === 3 ? 'drifted' : 'failed'}" id="outcome">${esc(meta.exit_code === 0 ? 'no drift (exit 0)' : meta.exit_code === 3 ? `drift on ${drifted} of ${all.length} cluster(s) (exit 3)` : `errors while checking (exit ${meta.exit_code})`)}</span></dd></dl>`;
  const main = `<h2>Fleet</h2><table id="fleet"><thead><tr><th>cluster</th><th>state</th><th>objects</th><th>drifted</th><th>hidden</th><th>errors</th></tr></thead><tbody>${fleet.join('')}</tbody></table>${sections.join('\n')}`;
  const data: PageData = { kind: 'drift', meta, clusters: Object.fromEntries([...reports].map(([c, r]) => [c, { state: r.state, objects: r.objects, drifted_objects: r.drifted_objects, hidden: r.hidden.length, errors: r.errors.length }])), details: [], diffs };
  return htmlPage({ title: `kplay drift ${meta.playbook}`, header, main, data });
}
