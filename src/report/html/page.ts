/**
 * The page around an HTML report: one self-contained file (styles and script inline, no network),
 * its data embedded as JSON in `<script type="application/json" id="kplay-data">`. The script
 * (vanilla, no framework) opens details and diffs on demand from that data, building the DOM with
 * `textContent` only: no text of the data is ever parsed as HTML.
 */
import { esc, scriptJson } from './escape.js';

/** One result shown in the detail panel. */
export interface DetailEntry {
  head: string;
  /** A status class: ok, changed, failed, skipped, unreachable, rescued, ignored. */
  status: string;
  lines: [string, string][];
  /** Index of its diff in {@link PageData.diffs}. */
  diff?: number;
  /** A table under the result (an analysis gate's measurements): header cells and rows of text. */
  table?: { head: string[]; rows: string[][] };
}

/** What a clicked cell or bar shows. */
export interface Detail {
  title: string;
  entries: DetailEntry[];
}

/** The data a page embeds. */
export interface PageData {
  kind: 'run' | 'drift';
  details: Detail[];
  /** Masked unified diffs, opened on demand. */
  diffs: string[];
  /** Anything else the page is about (the run's header, recap, tasks) for tools reading the file. */
  [key: string]: unknown;
}

const CSS = `
:root{--ok:#2e7d32;--changed:#b26a00;--failed:#c62828;--skipped:#607d8b;--unreachable:#6a1b9a;--rescued:#00838f;--wait:#1565c0;--drain:#5d4037;--bg:#fff;--fg:#1b1b1b;--mute:#666;--line:#ddd}
*{box-sizing:border-box}body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:var(--fg);background:var(--bg)}
header,main{padding:12px 20px}header{background:#f4f6f8;border-bottom:1px solid var(--line)}h1{font-size:20px;margin:0 0 6px}h2{font-size:16px;margin:22px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}dl.kv dt{color:var(--mute)}dl.kv dd{margin:0;word-break:break-word}
code,pre{font:12px/1.35 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.badge{display:inline-block;padding:1px 7px;border-radius:9px;color:#fff;font-size:12px;font-weight:600}
.s-ok{background:var(--ok)}.s-changed{background:var(--changed)}.s-failed{background:var(--failed)}.s-skipped{background:var(--skipped)}.s-unreachable{background:var(--unreachable)}.s-rescued{background:var(--rescued)}.s-ignored{background:#e57373}.s-wait{background:var(--wait)}.s-drain{background:var(--drain)}.s-in-sync{background:var(--ok)}.s-drifted{background:var(--changed)}.s-error{background:var(--failed)}
table{border-collapse:collapse;margin:4px 0}th,td{border:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top}th{background:#f4f6f8;font-weight:600}td.n{text-align:right}
.gate{margin:10px 0}table.measurements{font-size:13px}table.measurements td:nth-child(3){text-align:right;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.legend span{margin-right:10px}.legend i{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:middle;margin-right:4px}
.timeline{border:1px solid var(--line);position:relative}.tl-row{display:flex;align-items:center;border-top:1px solid #eee;height:22px}.tl-row:first-child{border-top:0}
.tl-name{width:180px;min-width:180px;padding:0 6px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;font-size:12px}
.tl-track{position:relative;flex:1;height:100%;background:repeating-linear-gradient(90deg,transparent 0 9.9%,#f1f1f1 9.9% 10%)}
.bar{position:absolute;top:3px;height:16px;min-width:2px;border-radius:2px;cursor:pointer;opacity:.9}.bar:hover{opacity:1;outline:1px solid #000}
.batch-mark{position:absolute;top:0;bottom:0;border-left:1px dashed #999;pointer-events:none}.batch-mark span{position:absolute;top:-16px;left:2px;font-size:11px;color:var(--mute);white-space:nowrap}
.tl-axis{display:flex;justify-content:space-between;margin-left:180px;font-size:11px;color:var(--mute);padding-top:2px}
.grid td.cell{width:18px;min-width:18px;height:18px;padding:0;cursor:pointer}.grid td.cell.none{background:#fafafa;cursor:default}.grid th.task{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:500;font-size:12px;max-height:180px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.grid td.cell.s-failed{box-shadow:inset 0 0 0 2px #000}
#detail{background:#fffef5;border:2px solid #c9b400;padding:8px 12px;margin:8px 0;display:none}#detail.open{display:block}#detail h3{margin:0 0 6px;font-size:15px}
#detail .entry{margin:6px 0;padding:6px;border:1px solid var(--line);background:#fff}#detail button.close{float:right}
pre.diff{background:#f7f7f7;border:1px solid var(--line);padding:6px;overflow:auto;max-height:40vh}pre.diff .add{color:#1b5e20;background:#e8f5e9}pre.diff .del{color:#b71c1c;background:#ffebee}pre.diff .hunk{color:#00695c}
.failure{border-left:4px solid var(--failed);padding:4px 10px;margin:8px 0;background:#fff6f6}.failure.rescued{border-color:var(--rescued);background:#f2fbfb}
.mute{color:var(--mute)}.ok-text{color:var(--ok)}.bad-text{color:var(--failed);font-weight:600}
button{font:inherit;font-size:12px;cursor:pointer}
`;

const SCRIPT = `
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('kplay-data').textContent);
  var panel = document.getElementById('detail') || document.body.appendChild(document.createElement('div'));
  function el(tag, cls, text) { var e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; }
  function diffPre(i) {
    var pre = el('pre', 'diff');
    pre.setAttribute('data-diff-of', String(i));
    String(data.diffs[i] || '').split('\\n').forEach(function (line) {
      var cls = line.indexOf('+++') === 0 || line.indexOf('---') === 0 ? '' : line.charAt(0) === '+' ? 'add' : line.charAt(0) === '-' ? 'del' : line.indexOf('@@') === 0 ? 'hunk' : '';
      pre.appendChild(el('span', cls, line + '\\n'));
    });
    return pre;
  }
  function toggleDiff(button) {
    var i = Number(button.getAttribute('data-diff'));
    var next = button.nextElementSibling;
    if (next && next.getAttribute('data-diff-of') === String(i)) { next.remove(); button.textContent = 'show diff'; return; }
    button.insertAdjacentElement('afterend', diffPre(i));
    button.textContent = 'hide diff';
  }
  function showDetail(i) {
    var d = data.details[i];
    if (!d) return;
    panel.textContent = '';
    var close = el('button', 'close', 'close');
    close.addEventListener('click', function () { panel.classList.remove('open'); });
    panel.appendChild(close);
    panel.appendChild(el('h3', '', d.title));
    d.entries.forEach(function (en) {
      var box = el('div', 'entry');
      var head = el('div');
      head.appendChild(el('span', 'badge s-' + en.status, en.status));
      head.appendChild(document.createTextNode(' ' + en.head));
      box.appendChild(head);
      if (en.lines.length) {
        var dl = el('dl', 'kv');
        en.lines.forEach(function (kv) { dl.appendChild(el('dt', '', kv[0])); dl.appendChild(el('dd', '', kv[1])); });
        box.appendChild(dl);
      }
      if (en.table) {
        var tb = el('table', 'measurements');
        var hr = el('tr');
        en.table.head.forEach(function (h) { hr.appendChild(el('th', '', h)); });
        tb.appendChild(hr);
        en.table.rows.forEach(function (row) {
          var tr = el('tr');
          row.forEach(function (c) { tr.appendChild(el('td', '', c)); });
          tb.appendChild(tr);
        });
        box.appendChild(tb);
      }
      if (typeof en.diff === 'number') {
        var b = el('button', 'diff-toggle', 'show diff');
        b.setAttribute('data-diff', String(en.diff));
        box.appendChild(b);
      }
      panel.appendChild(box);
    });
    panel.classList.add('open');
    panel.scrollIntoView({ block: 'nearest' });
  }
  document.addEventListener('click', function (ev) {
    var t = ev.target;
    if (!(t instanceof Element)) return;
    var diff = t.closest('[data-diff]');
    if (diff) { toggleDiff(diff); return; }
    var det = t.closest('[data-detail]');
    if (det) showDetail(Number(det.getAttribute('data-detail')));
  });
  document.addEventListener('keydown', function (ev) { if (ev.key === 'Escape') panel.classList.remove('open'); });
})();
`;

/** Where the page shows what a click opened (place it once in `main`). */
export const DETAIL_PANEL = '<div id="detail" role="region" aria-label="details"></div>';

/** A whole page: `header` and `main` are HTML made of escaped parts. */
export function htmlPage(o: { title: string; header: string; main: string; data: PageData }): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>${esc(o.title)}</title><style>${CSS}</style></head>
<body><header>${o.header}</header><main>${o.main}</main>
<script type="application/json" id="kplay-data">${scriptJson(o.data)}</script>
<script>${SCRIPT}</script>
</body></html>
`;
}
