/** Job readiness: Complete succeeds, Failed fails. */
import type { KubeObject } from '../types.js';
import { condition, failed, num, progressing, ready, specOf, statusOf, type Readiness } from './common.js';

/** Job: `Complete` (or `SuccessCriteriaMet`) → ready; `Failed` → failed. */
export function jobReadiness(obj: KubeObject): Readiness {
  const st = statusOf(obj);
  const f = condition(obj, 'Failed');
  if (f?.status === 'True') return failed(`job failed: ${f.reason ?? ''}${f.message ? ` ${f.message}` : ''}`.trim());
  const c = condition(obj, 'Complete');
  const want = num(specOf(obj), 'completions', 1);
  const msg = `${num(st, 'succeeded')}/${want} succeeded, ${num(st, 'active')} active, ${num(st, 'failed')} failed`;
  if (c?.status === 'True') return ready(msg);
  return progressing(msg);
}
