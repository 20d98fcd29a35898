/**
 * The fleet drift report of `kplay drift --output junit`: JUnit XML, one test suite per cluster
 * (see drift-report.ts for what a report holds).
 */
import { fieldLine, taskName, type ClusterReport } from './drift-report.js';

const xml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** JUnit XML: one test suite per cluster, one failing test case per drifted thing (naming the tasks that manage it), one error case per failed task, a passing case per in-sync cluster. */
export function driftJunit(reports: Map<string, ClusterReport>): string {
  const suites = [...reports].map(([c, r]) => {
    const cases: string[] = [];
    for (const d of r.drift) {
      const tasks = d.tasks.map(taskName).join('; ');
      const msgs = [...new Set(d.tasks.flatMap((t) => (t.msg !== undefined ? [t.msg] : [])))];
      const body = [`tasks: ${tasks}`, ...msgs, ...d.fields.map(fieldLine)].join('\n');
      cases.push(`    <testcase classname="${xml(c)}" name="${xml(d.object)}"><failure type="drift" message="${xml(`${d.object} drifted (${tasks})`)}">${xml(body)}</failure></testcase>`);
    }
    for (const p of r.errors) cases.push(`    <testcase classname="${xml(c)}" name="${xml(p.task)}"><error type="${xml(p.status)}" message="${xml(p.msg ?? p.status)}"/></testcase>`);
    if (cases.length === 0) cases.push(`    <testcase classname="${xml(c)}" name="in sync (${r.objects} objects)"/>`);
    return `  <testsuite name="${xml(c)}" tests="${cases.length}" failures="${r.drift.length}" errors="${r.errors.length}">\n${cases.join('\n')}\n  </testsuite>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="kplay drift">\n${suites.join('\n')}\n</testsuites>\n`;
}
