/**
 * `command`: run a program on the machine running kplay, as ansible.builtin.command does under
 * `connection: local` (no shell: the command line is split as Python's shlex does).
 */
import { defineModule, runCommand, commandResult, Default, Type } from 'kplay/sdk';

export default defineModule({
  name: 'command',
  summary: 'Run a local command (no shell), as ansible.builtin.command',
  description: [
    'Runs on the machine running kplay, once per cluster (use `run_once` for one run), exactly as `ansible.builtin.command` with `connection: local`: the command line is split as Python\'s `shlex.split` (no pipes, redirections or globs: use `shell` for those), `~` and `$VARS` in the arguments are expanded (`expand_argument_vars`).',
    'Free form: `command: ls -l chdir=/tmp creates=/tmp/x` takes `creates`, `removes`, `chdir`, `executable`, `stdin`, `stdin_add_newline` and `strip_empty_ends` out of the line (after templating).',
    'Always reports changed when it runs (use `changed_when`); fails on an exit code not in `ok_codes`. `creates`/`removes` (globs) skip it (ok). Check mode: skipped, unless `creates`/`removes` decide. Relative paths (`chdir`, `creates`, `removes`) are relative to the working directory kplay runs in, as under ansible-playbook. The task\'s `environment` is passed on.',
  ].join('\n\n'),
  freeForm: '_raw_params',
  schema: Type.Object(
    {
      _raw_params: Type.Optional(Type.String({ description: 'The free-form command line (`command: ls -l`), with optional `key=value` options in it.' })),
      cmd: Type.Optional(Type.String({ description: 'The command line (split as shlex does; no shell). Give the free form, `cmd` or `argv`.', examples: ['kubectl --context {{ cluster_name }} get nodes'] })),
      argv: Type.Optional(Type.Array(Type.String(), { minItems: 1, description: 'Program and arguments as a list (nothing is split).', examples: [['curl', '-fsS', '{{ health_url }}']] })),
      chdir: Type.Optional(Type.String({ description: 'Change into this directory before running.' })),
      executable: Type.Optional(Type.String({ description: 'Ignored by `command` (Ansible warns and ignores it too); use `shell` to choose a shell.' })),
      creates: Type.Optional(Type.String({ description: 'A path or glob: when it matches, the command does not run (ok).' })),
      removes: Type.Optional(Type.String({ description: 'A path or glob: when it matches nothing, the command does not run (ok).' })),
      stdin: Type.Optional(Type.String({ description: 'Text for standard input.' })),
      stdin_add_newline: Default(Type.Boolean({ description: 'Add a newline to `stdin`.' }), true),
      strip_empty_ends: Default(Type.Boolean({ description: 'Remove trailing newlines from `stdout` and `stderr`.' }), true),
      expand_argument_vars: Default(Type.Boolean({ description: 'Expand `~` and `$VARS` in the arguments (as Python\'s expanduser/expandvars; unset variables stay).' }), true),
      env: Default(Type.Record(Type.String(), Type.String(), { description: 'kplay extension: extra environment variables (Ansible sets them with the task keyword `environment`).' }), {}),
      ok_codes: Default(Type.Array(Type.Integer(), { description: 'kplay extension: exit codes that count as success.' }), [0]),
    },
    { additionalProperties: false },
  ),
  result: commandResult,
  diffMode: 'unsupported',
  checkMode: 'supported',
  examples: [
    { title: 'Free form, registered', yaml: '- command: date -u +%s\n  register: now\n  changed_when: false' },
    { title: 'No splitting: explicit arguments', yaml: '- command:\n    argv: [kubectl, --context, "{{ cluster_name }}", get, nodes, -o, name]\n  register: nodes\n  changed_when: false' },
    { title: 'Run once: skipped when the file exists', yaml: '- command: ./bootstrap.sh creates=/var/lib/app/.bootstrapped chdir=/opt/app' },
  ],
  async run(args, ctx) {
    if (args.executable !== undefined) ctx.log.warn(`As of Ansible 2.4, the parameter 'executable' is no longer supported with the 'command' module. Not using '${args.executable}'.`);
    return runCommand({ ...args, executable: undefined }, ctx, false);
  },
});
