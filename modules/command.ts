/**
 * `command`: run a local command (on the machine running kplay, e.g. a cloud CLI or a smoke
 * test). Changed unless `changed_when` says otherwise; fails on a non-zero exit code.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { defineModule, runProcess, Default, Type } from 'kplay/sdk';

const MAX_OUTPUT = 1024 * 1024;

export default defineModule({
  name: 'command',
  summary: 'Run a local command',
  description: 'Runs on the machine running kplay, once per cluster (use `run_once` for one run). Not run in check mode unless `creates`/`removes` decide it would be skipped. Output is capped at 1 MiB per stream.',
  freeForm: 'cmd',
  schema: Type.Object(
    {
      cmd: Type.Optional(Type.String({ description: 'Command line, run by /bin/sh -c (pipes and globs work; quote values with `| quote`). Give `cmd` or `argv`.', examples: ['kubectl --context {{ cluster_name }} get nodes'] })),
      argv: Type.Optional(Type.Array(Type.String(), { minItems: 1, description: 'Program and arguments, run without a shell (nothing is interpreted).', examples: [['curl', '-fsS', '{{ health_url }}']] })),
      chdir: Type.Optional(Type.String({ description: 'Working directory, relative to the playbook.' })),
      env: Default(Type.Record(Type.String(), Type.String(), { description: 'Extra environment variables.' }), {}),
      creates: Type.Optional(Type.String({ description: 'If this path exists, do not run (ok).' })),
      removes: Type.Optional(Type.String({ description: 'If this path does not exist, do not run (ok).' })),
      stdin: Default(Type.String({ description: 'Text for standard input.' }), ''),
      ok_codes: Default(Type.Array(Type.Integer(), { description: 'Exit codes that count as success.' }), [0]),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    cmd: Type.Optional(Type.String({ description: 'The command line that ran (`argv` joined with spaces).' })),
    rc: Type.Integer({ description: 'Exit code (128 when killed by a signal).' }),
    stdout: Type.String({ description: 'Standard output, without the final newline (at most 1 MiB).' }),
    stderr: Type.String({ description: 'Standard error, without the final newline (at most 1 MiB).' }),
    stdout_lines: Type.Optional(Type.Array(Type.String(), { description: '`stdout` split into lines.' })),
    stderr_lines: Type.Optional(Type.Array(Type.String(), { description: '`stderr` split into lines.' })),
    elapsed_ms: Type.Optional(Type.Integer({ description: 'How long the command ran, in milliseconds.' })),
  }),
  diffMode: 'unsupported',
  checkMode: 'supported',
  examples: [
    { title: 'Shell command with a registered result', yaml: '- command: "date -u +%s"\n  register: now\n  changed_when: false' },
    { title: 'No shell, explicit arguments', yaml: '- command:\n    argv: [kubectl, --context, "{{ cluster_name }}", get, nodes, -o, name]\n  register: nodes\n  changed_when: false' },
  ],
  async run(args, ctx) {
    if ((args.cmd === undefined) === (args.argv === undefined)) return { status: 'failed', msg: "command: give exactly one of 'cmd' or 'argv'" };
    const cwd = args.chdir ? path.resolve(ctx.baseDir, args.chdir) : ctx.baseDir;
    const resolve = (p: string): string => path.resolve(cwd, p);
    if (args.creates && existsSync(resolve(args.creates))) return { status: 'ok', msg: `skipped: ${args.creates} exists`, data: { rc: 0, stdout: '', stderr: '' } };
    if (args.removes && !existsSync(resolve(args.removes))) return { status: 'ok', msg: `skipped: ${args.removes} does not exist`, data: { rc: 0, stdout: '', stderr: '' } };
    const display = args.cmd ?? (args.argv as string[]).join(' ');
    if (ctx.checkMode) return { status: 'skipped', msg: `check mode: would run: ${display}` };
    if (!existsSync(cwd)) return { status: 'failed', msg: `chdir: ${cwd} does not exist` };
    const [prog, ...rest] = args.cmd !== undefined ? ['/bin/sh', '-c', args.cmd] : (args.argv as string[]);
    if (prog === undefined) return { status: 'failed', msg: 'command: argv is empty' };
    const started = Date.now();
    // Own process group, so cancelling kills the whole pipeline (sh and its children); tethered,
    // so the group is stopped even when kplay is killed outright (kill -9).
    const r = await runProcess(prog, rest, { cwd, env: { ...process.env, ...ctx.environment, ...args.env }, input: args.stdin, signal: ctx.signal, group: true, termGraceMs: 5000, maxOutput: MAX_OUTPUT });
    if (r.error) return { status: 'failed', msg: r.error.code === 'ENOENT' ? `command not found: ${prog}` : `cannot run ${prog}: ${r.error.message}` };
    const rc = r.code ?? (r.signal ? 128 : 1);
    const out = r.stdout.replace(/\n$/, '');
    const err = r.stderr.replace(/\n$/, '');
    const data = { cmd: display, rc, stdout: out, stderr: err, stdout_lines: out ? out.split('\n') : [], stderr_lines: err ? err.split('\n') : [], elapsed_ms: Date.now() - started };
    if (ctx.signal.aborted) return { status: 'failed', msg: `command cancelled: ${display}`, data };
    if (!args.ok_codes.includes(rc)) {
      const tail = (err || out).split('\n').slice(-5).join('\n');
      // It ran, so (as in Ansible) it counts as changed even though it failed.
      return { status: 'failed', msg: `non-zero return code ${rc}${r.signal ? ` (signal ${r.signal})` : ''}${tail ? `: ${tail}` : ''}`, data, changed: true };
    }
    return { status: 'changed', data };
  },
});
