/**
 * `async_status` (ansible.builtin.async_status): the state of a job started by a task with
 * `async` and `poll: 0` — running, or finished with that task's result — or forget it (`cleanup`).
 */
import { asyncJob, cleanupAsyncJob, defineModule, Default, StringEnum, Type, type Args } from 'kplay/sdk';

const schema = Type.Object(
  {
    jid: Type.String({ minLength: 1, description: 'The job id the asynchronous task registered (`ansible_job_id`).', examples: ['{{ upgrade_job.ansible_job_id }}'] }),
    mode: Default(StringEnum(['status', 'cleanup'], { description: '`status`: report the job (running: `finished: false`; finished: its task\'s result, `finished: true`). `cleanup`: forget a job.' }), 'status'),
  },
  { additionalProperties: false },
);

/** Arguments of `async_status` (after defaults). */
export type AsyncStatusArgs = Args<typeof schema>;

export default defineModule({
  name: 'async_status',
  summary: 'Read (or forget) an asynchronous job',
  schema,
  result: Type.Object(
    {
      ansible_job_id: Type.String({ description: 'The job id.' }),
      started: Type.Optional(Type.Boolean({ description: 'Always true for a known job.' })),
      finished: Type.Optional(Type.Boolean({ description: 'Whether the job has ended.' })),
      erased: Type.Optional(Type.String({ description: 'With `mode: cleanup`: the job forgotten.' })),
    },
    { additionalProperties: Type.Unknown({ description: 'When finished: the registered fields of the job\'s task (`stdout`, `rc`, `result`, …).' }) },
  ),
  diffMode: 'unsupported',
  checkMode: 'supported',
  examples: [
    {
      title: 'Start a long upgrade in the background, wait for it later',
      yaml: '- kubernetes.core.helm: { name: web, chart_ref: ./charts/web, release_namespace: web, wait: true }\n  async: 900\n  poll: 0\n  register: upgrade\n- async_status: { jid: "{{ upgrade.ansible_job_id }}" }\n  register: job\n  until: job.finished\n  retries: 90\n  delay: 10',
    },
  ],
  async run(args, ctx) {
    const job = asyncJob(args.jid, ctx.cluster.name);
    if (!job) return { status: 'failed', msg: 'could not find job', data: { ansible_job_id: args.jid, started: true, finished: true } };
    if (args.mode === 'cleanup') {
      cleanupAsyncJob(args.jid, ctx.cluster.name);
      return { status: 'ok', data: { ansible_job_id: args.jid, erased: args.jid } };
    }
    const o = job.outcome;
    if (!o) return { status: 'ok', msg: `job ${args.jid} running`, data: { ansible_job_id: args.jid, started: true, finished: false, stdout: '', stderr: '', stdout_lines: [], stderr_lines: [] } };
    const { failed: _f, changed: _c, ...fields } = o.registered;
    const data = { ...fields, ansible_job_id: args.jid, started: true, finished: true };
    if (o.failed) return { status: 'failed', msg: o.msg ?? 'the job failed', data, changed: o.changed };
    return { status: o.changed ? 'changed' : 'ok', registerMsg: typeof o.registered.msg === 'string', msg: typeof o.registered.msg === 'string' ? o.registered.msg : `job ${args.jid} finished`, data };
  },
});
