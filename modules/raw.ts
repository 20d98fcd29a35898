/**
 * `raw`: a command line run through the shell, as ansible.builtin.raw runs it over the local
 * connection (kplay runs every task on the controller).
 */
import { constants } from 'node:os';
import { defineModule, runProcess, splitLines, Type } from 'kplay/sdk';

/** Python's `shlex.quote`. */
export function shQuote(s: string): string {
  if (s === '') return "''";
  if (/^[\w@%+=:,./-]+$/u.test(s)) return s;
  return `'${s.replace(/'/g, `'"'"'`)}'`;
}

export default defineModule({
  name: 'raw',
  summary: 'Run a command line through the shell, as ansible.builtin.raw over the local connection',
  description: [
    "As ansible-core's `raw` with the local connection: `/bin/sh -c CMD` in the playbook's directory (with `executable`: `/bin/sh -c 'EXECUTABLE -c CMD'`, as ansible-core builds it), no module, no `environment` (a task `environment` is warned about and not passed, as there). Always changed; failed (`non-zero return code`) when the exit code is not 0; skipped in check mode. Registers `rc`, `stdout`, `stdout_lines`, `stderr`, `stderr_lines` (output as it came: no trailing newline stripped).",
    "A cluster is a host whose tasks run on the controller: `raw` runs there for every cluster, as it does for a host with `ansible_connection: local`. Ansible would run it on the host its connection names (`ssh`, `kubectl` exec into a pod): kplay has no such connection.",
  ].join('\n\n'),
  freeForm: '_raw_params',
  schema: Type.Object(
    {
      _raw_params: Type.String({ description: 'The command line (the free form: `raw: uname -a`).' }),
      executable: Type.Optional(Type.String({ description: 'The shell to run the line with (`/bin/bash`); also `executable=` in the free form.' })),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    rc: Type.Integer({ description: 'Exit code.' }),
    stdout: Type.String({ description: 'Standard output, as it came.' }),
    stdout_lines: Type.Array(Type.String(), { description: '`stdout` split into lines.' }),
    stderr: Type.String({ description: 'Standard error, as it came.' }),
    stderr_lines: Type.Array(Type.String(), { description: '`stderr` split into lines.' }),
  }),
  diffMode: 'unsupported',
  checkMode: 'supported',
  examples: [{ title: 'A line through bash', yaml: '- raw: set -o pipefail; kubectl get ns | wc -l\n  args:\n    executable: /bin/bash\n  register: out' }],
  async run(args, ctx) {
    if (Object.keys(ctx.environment).length > 0) ctx.log.warn('raw module does not support the environment keyword');
    if (ctx.checkMode) return { status: 'skipped' };
    const line = args.executable ? `${args.executable} -c ${shQuote(args._raw_params)}` : args._raw_params;
    const cwd = typeof ctx.vars.playbook_dir === 'string' ? ctx.vars.playbook_dir : ctx.baseDir;
    const r = await runProcess('/bin/sh', ['-c', line], { cwd, signal: ctx.signal, group: true, termGraceMs: 5000, maxOutput: 16 * 1024 * 1024 });
    if (r.error) return { status: 'failed', msg: `raw: cannot run /bin/sh: ${r.error.message}` };
    const rc = r.code ?? (r.signal ? -(constants.signals[r.signal] ?? 1) : 1);
    const data = { rc, stdout: r.stdout, stdout_lines: splitLines(r.stdout), stderr: r.stderr, stderr_lines: splitLines(r.stderr) };
    if (rc !== 0) return { status: 'failed', msg: 'non-zero return code', data, changed: true };
    return { status: 'changed', data };
  },
});
