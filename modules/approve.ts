/**
 * `approve`: an approval gate between the stages of a run. The task stops (per cluster, or once
 * with `run_once`) until someone runs `kplay approve RUN_ID --gate NAME -i INV` from another
 * terminal or a CI job, or until `timeout`; it watches the gate's ConfigMap in `kplay-system`,
 * so it waits without using CPU. Who approved (and when, and their comment) is in the result and
 * so in the run record. A rejection or a timeout fails the task.
 */
import { GATE_NAME, gateRef, gateState, openGate, kubeFor, errorMessage, defineModule, Default, Type } from 'kplay/sdk';

export default defineModule({
  name: 'approve',
  summary: 'Stop at an approval gate until someone approves (kplay approve RUN_ID --gate NAME)',
  description:
    'Waits, on the task\'s cluster, until the gate is approved with `kplay approve RUN_ID --gate NAME -i INVENTORY [--limit CLUSTERS] [--as NAME] [--comment TEXT]` (or rejected with `--reject`), from any machine that can reach the cluster. The gate is a ConfigMap `kplay-system/kplay-gate-<run id>-<gate>`; the task watches it (no polling). With `run_once: true` one approval covers the batch. In check mode the task reports that it would wait and writes nothing. Registered data: `gate`, `approved_by`, `approved_at`, `comment`, `waited_ms`.',
  schema: Type.Object(
    {
      gate: Type.String({ pattern: GATE_NAME.source, description: 'Name of the gate (lower-case letters, digits, `-`).', examples: ['prod-go'] }),
      timeout: Default(Type.Integer({ minimum: 1, description: 'Seconds to wait for the decision before the task fails.' }), 3600),
      message: Type.Optional(Type.String({ description: 'Shown while waiting and stored with the gate: what the approver should check.' })),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    gate: Type.Optional(Type.String({ description: 'Name of the gate.' })),
    approved_by: Type.Optional(Type.String({ description: 'Who approved (kubeconfig user or `--as`).' })),
    approved_at: Type.Optional(Type.String({ description: 'When, as an RFC 3339 time.' })),
    comment: Type.Optional(Type.String({ description: 'The approver\'s `--comment` (empty when none).' })),
    waited_ms: Type.Optional(Type.Integer({ description: 'How long the task waited, in milliseconds.' })),
  }),
  diffMode: 'unsupported',
  checkMode: 'supported',
  usesCluster: true,
  examples: [
    {
      title: 'Canary first, then wait for a human before the rest of production',
      yaml: "- name: go / no-go for the rest of prod\n  approve:\n    gate: prod-go\n    message: check the canary dashboards\n    timeout: 7200\n  run_once: true\n  when: \"'prod' in group_names\"",
    },
  ],
  async run(args, ctx) {
    const runId = String(ctx.vars.run_id ?? '');
    const hint = `kplay approve ${runId} --gate ${args.gate} -i INVENTORY${ctx.cluster.name ? ` --limit ${ctx.cluster.name}` : ''}`;
    if (ctx.checkMode) return { status: 'ok', msg: `would wait at gate ${args.gate} for: ${hint}` };
    const started = Date.now();
    const timeoutMs = args.timeout * 1000;
    const client = await kubeFor(ctx);
    try {
      await openGate(client, runId, args.gate, { cluster: ctx.cluster.name, message: args.message === undefined ? undefined : ctx.mask(args.message) }, ctx.signal);
    } catch (e) {
      return { status: 'failed', msg: `approve: cannot open gate ${args.gate}: ${errorMessage(e)}` };
    }
    ctx.log.progress(`waiting at gate ${args.gate}${args.message ? ` (${args.message})` : ''}: approve with ${hint}`);
    const ref = gateRef(runId, args.gate);
    const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
    let decided = gateState(await client.get(ref, ctx.signal));
    try {
      if (decided?.state === 'pending' || decided === undefined) {
        await client.watch('v1', 'ConfigMap', { namespace: ref.namespace, fieldSelector: `metadata.name=${ref.name}`, signal }, (_e, state) => {
          const s = gateState(state.get(ref.name) ?? [...state.values()][0]);
          if (s && s.state !== 'pending') {
            decided = s;
            return true;
          }
          return false;
        });
      }
    } catch (e) {
      if (ctx.signal.aborted) return { status: 'failed', msg: `interrupted while waiting at gate ${args.gate}` };
      if (!signal.aborted) return { status: 'failed', msg: `approve: watching gate ${args.gate}: ${errorMessage(e)}` };
    }
    const waited = Date.now() - started;
    // the decision is in the result (and the run record); the gate object is not kept
    await client.delete(ref).catch(() => false);
    if (!decided || decided.state === 'pending') {
      if (ctx.signal.aborted) return { status: 'failed', msg: `interrupted while waiting at gate ${args.gate}` };
      return { status: 'failed', msg: `gate ${args.gate} was not approved within ${args.timeout}s (approve with: ${hint})` };
    }
    const data = { gate: args.gate, approved_by: decided.by ?? 'unknown', approved_at: decided.at ?? '', comment: decided.comment ?? '', waited_ms: waited };
    if (decided.state === 'rejected') return { status: 'failed', msg: `gate ${args.gate} rejected by ${decided.by ?? 'unknown'} at ${decided.at ?? '?'}${decided.comment ? `: ${decided.comment}` : ''}`, data };
    return { status: 'ok', msg: `gate ${args.gate} approved by ${decided.by ?? 'unknown'} at ${decided.at ?? '?'}${decided.comment ? ` (${decided.comment})` : ''}`, data };
  },
});
