/**
 * `wait_for`: wait (driven by watch events, never polling) until Kubernetes objects are ready,
 * a condition holds, an expression on the object is true, or they are deleted — or, with
 * Ansible's arguments (host/port/path/search_regex…), what ansible.builtin.wait_for waits for.
 */
import { defineModule, kubeFor, KubeApiError, maskObject, secretValues, waitFor, waitLocal, errorMessage, Default, StringEnum, Type, type WaitMode } from 'kplay/sdk';

/** Arguments only the Kubernetes form takes, and only Ansible's form takes (mixing them is an error). */
const K8S_KEYS = ['kind', 'api_version', 'name', 'namespace', 'label_selector', 'condition', 'that'] as const;
const ANSIBLE_KEYS = ['host', 'port', 'path', 'search_regex', 'connect_timeout', 'delay', 'sleep', 'msg', 'active_connection_states', 'exclude_hosts'] as const;

export default defineModule({
  name: 'wait_for',
  summary: 'Wait until Kubernetes objects are ready, match a condition or expression, or are deleted',
  description: `Watches the objects (one watch per target, no polling) until they reach the wanted state. Readiness rules (kstatus spirit): Deployment rollout complete (observed generation, all replicas updated, available and ready, no old pods), StatefulSet (partition aware), DaemonSet, ReplicaSet, Job (Complete; Failed fails), Pod (Ready or Succeeded), PVC (Bound), Service (LoadBalancer ingress assigned), CRD (Established), Namespace (Active); other objects: a \`Ready\` condition if present, else observedGeneration == generation.

Fails fast, without waiting for the timeout, when pods of a rollout are stuck in ImagePullBackOff, ErrImagePull, CrashLoopBackOff, CreateContainerConfigError or InvalidImageName, or a Job failed. On timeout the message lists what was not ready and recent Warning events. Never reports changed.

**Ansible's form** (\`ansible.builtin.wait_for\`, on the machine running kplay): without \`kind\`, the arguments are Ansible's — \`port\` (on \`host\`, default 127.0.0.1: \`started\` accepts connections, \`stopped\` refuses them, \`drained\` has no active connections), \`path\` (\`present\`/\`started\` exists, optionally containing \`search_regex\`; \`absent\`), or neither (sleep \`timeout\` seconds); \`delay\`, \`sleep\`, \`connect_timeout\`, \`msg\`. Default \`state\` is \`started\`. Result as Ansible's: \`elapsed\` (whole seconds), \`state\`, \`port\`, \`path\`, \`search_regex\`, \`match_groups\`, \`match_groupdict\`. Not run in check mode (as Ansible). Giving arguments of both forms is an error.`,
  usesCluster: true,
  readOnly: true,
  checkMode: 'supported',
  diffMode: 'unsupported',
  schema: Type.Object(
    {
      kind: Type.Optional(Type.String({ minLength: 1, description: 'Kind of the object(s) to wait on (the Kubernetes form; without it, the arguments are Ansible\'s).', examples: ['Deployment', 'Job', 'Pod'] })),
      api_version: Type.Optional(Type.String({ minLength: 1, description: 'API version of `kind` (`apps/v1` for Deployments). Default `v1`.', examples: ['apps/v1', 'batch/v1'] })),
      name: Type.Optional(Type.String({ minLength: 1, description: 'Name of the object. Give `name` or `label_selector`.', examples: ['web'] })),
      namespace: Type.Optional(Type.String({ minLength: 1, description: 'Namespace of the object(s) (namespaced kinds). Default `default`.', examples: ['web'] })),
      label_selector: Type.Optional(Type.String({ minLength: 1, description: 'Label selector; every matching object must reach the state (at least one must exist unless `state: absent`).', examples: ['app=web,tier!=canary'] })),
      state: Type.Optional(StringEnum(['present', 'absent', 'started', 'stopped', 'drained'], { description: 'Kubernetes form: `present` (default; readiness, or `condition` / `that`) or `absent` (deleted). Ansible\'s form: `started` (default) / `present`, `stopped` / `absent`, `drained`.' })),
      condition: Type.Optional(
        Type.Object(
          {
            type: Type.String({ minLength: 1, description: 'Condition type, e.g. `Available`.' }),
            status: Default(StringEnum(['True', 'False', 'Unknown'], { description: 'Wanted status of the condition.' }), 'True'),
          },
          { additionalProperties: false, description: 'Wait for a status condition instead of the readiness rules: `type` and `status` (default `"True"`).', examples: [{ type: 'Available', status: 'True' }] },
        ),
      ),
      that: Type.Optional(Type.String({ minLength: 1, description: 'Condition (an Ansible expression) evaluated with `object` (the live object) besides the task variables; wait until it is true for every object.', examples: ['object.status.readyReplicas == 3'] })),
      timeout: Type.Optional(Type.Number({ minimum: 0, description: 'Seconds to wait before failing (default 300). Ansible\'s form without port or path: seconds to sleep.' })),
      host: Type.Optional(Type.String({ minLength: 1, description: 'Ansible\'s form: host of `port` (default 127.0.0.1).' })),
      port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: 'Ansible\'s form: TCP port to wait on.' })),
      path: Type.Optional(Type.String({ minLength: 1, description: 'Ansible\'s form: local file to wait on (relative to the working directory).' })),
      search_regex: Type.Optional(Type.String({ description: 'Ansible\'s form: regular expression (Python syntax, multiline) the file or the data read from the port must match.' })),
      connect_timeout: Type.Optional(Type.Integer({ minimum: 0, description: 'Ansible\'s form: seconds per connection attempt (default 5).' })),
      delay: Type.Optional(Type.Integer({ minimum: 0, description: 'Ansible\'s form: seconds to wait before the first check (default 0).' })),
      sleep: Type.Optional(Type.Integer({ minimum: 0, description: 'Ansible\'s form: seconds between checks (default 1).' })),
      msg: Type.Optional(Type.String({ description: 'Ansible\'s form: message on timeout instead of the default one.' })),
      active_connection_states: Type.Optional(Type.Array(StringEnum(['ESTABLISHED', 'FIN_WAIT1', 'FIN_WAIT2', 'SYN_RECV', 'SYN_SENT', 'TIME_WAIT']), { description: 'Ansible\'s form, `drained`: TCP states that count as active (default all of them).' })),
      exclude_hosts: Type.Optional(Type.Array(Type.String(), { description: 'Ansible\'s form, `drained`: remote addresses whose connections do not count.' })),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    resources: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: 'Kubernetes form: the objects as last seen (Secret values masked).' })),
    elapsed: Type.Number({ description: 'Seconds waited (Kubernetes form: one decimal; Ansible\'s form: whole seconds).' }),
    not_ready: Type.Optional(Type.Array(Type.String(), { description: 'Kubernetes form: what was not ready when the wait ended (empty on success).' })),
    state: Type.Optional(Type.String({ description: 'Ansible\'s form: the state waited for; with `path`, what is at the path (`file`, `directory`, `absent`…), as Ansible reports it.' })),
    mode: Type.Optional(Type.String({ description: 'Ansible\'s form with `path`: its permissions.' })),
    uid: Type.Optional(Type.Integer({ description: 'Ansible\'s form with `path`: owner id.' })),
    gid: Type.Optional(Type.Integer({ description: 'Ansible\'s form with `path`: group id.' })),
    owner: Type.Optional(Type.String({ description: 'Ansible\'s form with `path`: owner name.' })),
    group: Type.Optional(Type.String({ description: 'Ansible\'s form with `path`: group name.' })),
    size: Type.Optional(Type.Integer({ description: 'Ansible\'s form with `path`: size in bytes.' })),
    port: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: 'Ansible\'s form: the port (null without).' })),
    path: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Ansible\'s form: the path (null without).' })),
    search_regex: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Ansible\'s form: the regular expression (null without).' })),
    match_groups: Type.Optional(Type.Array(Type.Union([Type.String(), Type.Null()]), { description: 'Ansible\'s form: groups of the match in a file.' })),
    match_groupdict: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()]), { description: 'Ansible\'s form: named groups of the match in a file.' })),
  }),
  examples: [
    { title: 'Wait for a rollout', yaml: '- wait_for:\n    kind: Deployment\n    api_version: apps/v1\n    name: web\n    namespace: web\n    timeout: 600' },
    { title: 'Wait for a condition', yaml: '- wait_for:\n    kind: Deployment\n    api_version: apps/v1\n    name: web\n    namespace: web\n    condition: { type: Available, status: "True" }' },
    { title: 'Wait for an expression on the object', yaml: "- wait_for:\n    kind: Deployment\n    api_version: apps/v1\n    name: web\n    namespace: web\n    that: 'object.status.readyReplicas == 3'" },
    { title: 'Ansible\'s form: a port accepts connections', yaml: '- wait_for:\n    host: 127.0.0.1\n    port: 8080\n    timeout: 60' },
    { title: 'Ansible\'s form: a line in a log file', yaml: '- wait_for:\n    path: /tmp/kplay/server.log\n    search_regex: "listening on (\\\\d+)"\n  register: up' },
    { title: 'Wait until pods are gone', yaml: '- wait_for:\n    kind: Pod\n    namespace: batch\n    label_selector: job-name=migrate\n    state: absent' },
  ],
  async run(args, ctx) {
    const given = args as Record<string, unknown>;
    const k8sGiven = K8S_KEYS.filter((k) => given[k] !== undefined);
    const ansibleGiven = ANSIBLE_KEYS.filter((k) => given[k] !== undefined);
    if (k8sGiven.length && ansibleGiven.length) {
      return { status: 'failed', msg: `wait_for: ${k8sGiven.join(', ')} (waiting on Kubernetes objects) cannot be combined with ${ansibleGiven.join(', ')} (Ansible's wait_for on a port or file): use one form per task` };
    }
    if (args.kind === undefined) {
      if (k8sGiven.length) return { status: 'failed', msg: `wait_for: ${k8sGiven.join(', ')} need kind (the Kubernetes form); for Ansible's form give host/port/path instead` };
      const state = args.state ?? 'started';
      return waitLocal({ host: args.host ?? '127.0.0.1', port: args.port, path: args.path, search_regex: args.search_regex, state, timeout: args.timeout ?? 300, connect_timeout: args.connect_timeout ?? 5, delay: args.delay ?? 0, sleep: args.sleep ?? 1, msg: args.msg, active_connection_states: args.active_connection_states ?? ['ESTABLISHED', 'FIN_WAIT1', 'FIN_WAIT2', 'SYN_RECV', 'SYN_SENT', 'TIME_WAIT'], exclude_hosts: args.exclude_hosts }, ctx);
    }
    if (args.state === 'started' || args.state === 'stopped' || args.state === 'drained') return { status: 'failed', msg: `wait_for: state ${args.state} is for Ansible's form (port/path); objects take present or absent` };
    const kind = args.kind;
    const apiVersion = args.api_version ?? 'v1';
    const timeout = args.timeout ?? 300;
    if (timeout <= 0) return { status: 'failed', msg: 'wait_for: timeout must be above 0 to wait on objects' };
    if (!args.name && !args.label_selector) return { status: 'failed', msg: 'wait_for: give name or label_selector' };
    const modes = [args.condition !== undefined, args.that !== undefined].filter(Boolean).length;
    if (modes > 1) return { status: 'failed', msg: 'wait_for: give at most one of condition, that' };
    if (args.state === 'absent' && modes) return { status: 'failed', msg: 'wait_for: condition/that cannot be combined with state: absent' };
    const that = args.that;
    const mode: WaitMode =
      args.state === 'absent'
        ? { type: 'absent' }
        : args.condition
          ? { type: 'condition', condition: args.condition.type, status: args.condition.status }
          : that !== undefined
            ? { type: 'check', describe: `\`${that}\``, check: (object) => ctx.evalCondition(that, { object }) }
            : { type: 'ready' };
    const client = await kubeFor(ctx);
    const started = Date.now();
    try {
      const info = await client.resource(apiVersion, kind);
      const namespace = info.namespaced ? (args.namespace ?? 'default') : undefined;
      const out = await waitFor(client, [{ apiVersion, kind, name: args.name, namespace, labelSelector: args.label_selector }], mode, {
        timeoutMs: timeout * 1000,
        signal: ctx.signal,
        progress: (m) => ctx.log.progress(m),
      });
      for (const o of out.objects) for (const v of secretValues(o)) ctx.addSecret(v);
      const data = { resources: out.objects.map(maskObject), elapsed: Math.round((Date.now() - started) / 100) / 10, not_ready: out.notReady };
      return out.ok ? { status: 'ok', msg: out.msg, data } : { status: 'failed', msg: ctx.mask(out.msg), data };
    } catch (e) {
      if (e instanceof Error && e.name === 'UnreachableError') throw e;
      if (ctx.signal.aborted) throw e;
      return { status: 'failed', msg: ctx.mask(e instanceof KubeApiError ? e.message : `wait_for: ${errorMessage(e)}`) };
    }
  },
});
