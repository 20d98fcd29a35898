/**
 * `shell`: run a command line through a shell on the machine running kplay, as
 * ansible.builtin.shell does under `connection: local`.
 */
import { defineModule, runCommand, commandResult, Default, Type } from 'kplay/sdk';

export default defineModule({
  name: 'shell',
  summary: 'Run a local command line through a shell, as ansible.builtin.shell',
  description: [
    'Runs `executable -c CMD` (default `/bin/sh`) on the machine running kplay, once per cluster, exactly as `ansible.builtin.shell` with `connection: local`: pipes, redirections, globs and variables work (quote values with `| quote`).',
    'Free form: `shell: make all chdir=/src creates=/src/out` takes `creates`, `removes`, `chdir`, `executable`, `stdin`, `stdin_add_newline` and `strip_empty_ends` out of the line (after templating).',
    'Always reports changed when it runs (use `changed_when`); fails on a non-zero exit code. `creates`/`removes` (globs) skip it (ok). Check mode: skipped, unless `creates`/`removes` decide. Relative paths are relative to the working directory kplay runs in. The task\'s `environment` is passed on.',
  ].join('\n\n'),
  freeForm: '_raw_params',
  schema: Type.Object(
    {
      _raw_params: Type.Optional(Type.String({ description: 'The free-form command line (`shell: ls | wc -l`), with optional `key=value` options in it.' })),
      cmd: Type.Optional(Type.String({ description: 'The command line (instead of the free form).', examples: ['kubectl get pods -o name | wc -l'] })),
      chdir: Type.Optional(Type.String({ description: 'Change into this directory before running.' })),
      executable: Type.Optional(Type.String({ description: 'The shell to run the command with (absolute path), e.g. `/bin/bash`.' })),
      creates: Type.Optional(Type.String({ description: 'A path or glob: when it matches, the command does not run (ok).' })),
      removes: Type.Optional(Type.String({ description: 'A path or glob: when it matches nothing, the command does not run (ok).' })),
      stdin: Type.Optional(Type.String({ description: 'Text for standard input.' })),
      stdin_add_newline: Default(Type.Boolean({ description: 'Add a newline to `stdin`.' }), true),
      strip_empty_ends: Default(Type.Boolean({ description: 'Remove trailing newlines from `stdout` and `stderr`.' }), true),
      env: Default(Type.Record(Type.String(), Type.String(), { description: 'kplay extension: extra environment variables (Ansible sets them with the task keyword `environment`).' }), {}),
      ok_codes: Default(Type.Array(Type.Integer(), { description: 'kplay extension: exit codes that count as success.' }), [0]),
    },
    { additionalProperties: false },
  ),
  result: commandResult,
  diffMode: 'unsupported',
  checkMode: 'supported',
  examples: [
    { title: 'A pipeline, registered', yaml: '- shell: kubectl get pods -o name | wc -l\n  register: pods\n  changed_when: false' },
    { title: 'Another shell', yaml: '- shell:\n    cmd: set -o pipefail && ./render.sh | kubectl apply -f -\n    executable: /bin/bash' },
  ],
  async run(args, ctx) {
    return runCommand(args, ctx, true);
  },
});
