/**
 * `k8s_exec` (kubernetes.core.k8s_exec): run a command in a container of a running pod through
 * the apiserver's `pods/exec` (a WebSocket), as kubernetes.core 6.2.0 does.
 */
import { defineModule, errorMessage, k8sAuthProperties, KubeApiError, shlexSplit, taskClient, Type } from 'kplay/sdk';

/** Split like Python's `shlex.split`, or say why not (an unclosed quote). */
function splitCommand(command: string): string[] | string {
  try {
    return shlexSplit(command);
  } catch (e) {
    return errorMessage(e);
  }
}

export default defineModule({
  name: 'k8s_exec',
  summary: 'kubernetes.core.k8s_exec: run a command in a container of a running pod',
  description:
    'Runs `command` (split like a shell would, without one: `shlex.split`) in `container` of `pod` — by default the pod\'s first container, as kubectl — with no stdin and no TTY, and registers `stdout`, `stderr`, `stdout_lines`, `stderr_lines` and `rc` (and `return_code`, its deprecated name). A command that exits non-zero fails the task (register it with `ignore_errors: true` or `failed_when` to read `rc`). Always reports changed, and runs in check mode too — kubernetes.core does both, since a command may change anything. Connection settings as `k8s`.',
  usesCluster: true,
  checkMode: 'supported',
  diffMode: 'unsupported',
  schema: Type.Object(
    {
      namespace: Type.String({ minLength: 1, description: 'Namespace of the pod.' }),
      pod: Type.String({ minLength: 1, description: 'Name of the pod.' }),
      container: Type.Optional(Type.String({ description: 'Container to run in; default: the pod\'s first container.' })),
      command: Type.String({ minLength: 1, description: 'The command line, e.g. `cat /etc/resolv.conf`: split into words (quotes and backslashes as in a shell), not run by a shell — use `sh -c "…"` for pipes and redirections.' }),
      ...k8sAuthProperties,
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    stdout: Type.String({ description: 'What the command printed on stdout.' }),
    stdout_lines: Type.Array(Type.String(), { description: '`stdout` split into lines.' }),
    stderr: Type.String({ description: 'What the command printed on stderr.' }),
    stderr_lines: Type.Array(Type.String(), { description: '`stderr` split into lines.' }),
    rc: Type.Integer({ description: 'Exit code of the command.' }),
    return_code: Type.Integer({ description: 'Deprecated name of `rc`.' }),
  }),
  examples: [
    { title: 'Run a command', yaml: '- kubernetes.core.k8s_exec:\n    namespace: web\n    pod: web-0\n    command: cat /etc/resolv.conf\n  register: out' },
    { title: 'Read the exit code of a command that may fail', yaml: '- kubernetes.core.k8s_exec:\n    namespace: web\n    pod: web-0\n    container: app\n    command: sh -c "test -f /ready"\n  register: probe\n  ignore_errors: true\n- debug:\n    msg: "{{ \'ready\' if probe.rc == 0 else \'not ready\' }}"' },
  ],
  async run(args, ctx) {
    const command = splitCommand(args.command);
    if (typeof command === 'string') return { status: 'failed', msg: `Failed to execute on pod ${args.pod} due to : ${command}` };
    const conn = await taskClient(ctx, args);
    if ('failed' in conn) return conn.failed;
    const client = conn.client;
    if (!client.podExec) return { status: 'failed', msg: 'k8s_exec: this cluster connection cannot run commands in pods' };
    let container = args.container || undefined;
    try {
      if (!container) {
        // kubernetes.core reads the pod for its first container and ignores a failed read
        const pod = await client.get({ apiVersion: 'v1', kind: 'Pod', name: args.pod, namespace: args.namespace }, ctx.signal).catch((e: unknown) => {
          if (e instanceof Error && e.name === 'UnreachableError') throw e;
          return undefined;
        });
        const first: unknown = (pod as { spec?: { containers?: { name?: unknown }[] } } | undefined)?.spec?.containers?.[0]?.name;
        if (typeof first === 'string') container = first;
      }
      ctx.log.info(`pod ${args.namespace}/${args.pod}${container ? ` (${container})` : ''}: ${ctx.mask(args.command)}`);
      const r = await client.podExec({ namespace: args.namespace, pod: args.pod, container, command, signal: ctx.signal });
      const rc = exitCode(r.status);
      // an exit status kubernetes.core cannot read (kwok's InternalError for a failed command): its module crashes
      if (typeof rc === 'string') return { status: 'failed', msg: ctx.mask(`Task failed: Module failed: ${rc}`) };
      const data = { stdout: r.stdout, stdout_lines: lines(r.stdout), stderr: r.stderr, stderr_lines: lines(r.stderr), rc, return_code: rc };
      // kubernetes.core returns changed with rc; Ansible fails a result whose rc is not 0
      if (rc !== 0) return { status: 'failed', changed: true, registerMsg: false, msg: ctx.mask(`command in pod ${args.namespace}/${args.pod} exited with ${rc}`), data };
      return { status: 'changed', data };
    } catch (e) {
      if (e instanceof Error && e.name === 'UnreachableError') throw e;
      const why = e instanceof KubeApiError ? `(${e.status})\nReason: ${e.reason}: ${e.apiMessage}` : errorMessage(e);
      return { status: 'failed', msg: ctx.mask(`Failed to execute on pod ${args.pod} due to : ${why}`) };
    }
  },
});

/** Python's `str.splitlines()` for the usual line ends (what Ansible's `*_lines` are). */
function lines(s: string): string[] {
  const out = s.split(/\r\n|\r|\n/);
  if (out[out.length - 1] === '') out.pop();
  return out;
}

/**
 * kubernetes.core's reading of the error channel: `Success` is 0, else the first cause's message
 * as an integer (a kubelet's `NonZeroExitCode`); what Python raises otherwise, as a string.
 */
export function exitCode(st: { status?: string; details?: { causes?: { message?: string }[] } } | undefined): number | string {
  if (!st || st.status === 'Success') return 0;
  if (!st.details) return "'details'";
  if (!Array.isArray(st.details.causes)) return "'causes'";
  const first = st.details.causes[0];
  if (!first) return 'list index out of range';
  const text = first.message ?? '';
  return /^\s*[+-]?\d+\s*$/.test(text) ? Number(text) : `invalid literal for int() with base 10: '${text}'`;
}
