/**
 * The public SDK of kplay: everything a task module needs, and nothing else reaches into kplay's
 * internals. Built-in modules import only from here (`import { defineModule } from 'kplay/sdk'`),
 * so copying one is all a community module author needs.
 *
 * - defining a module: {@link defineModule}, the context and result types, errors;
 * - Kubernetes: the client of the task's cluster ({@link kubeFor}), applying/deleting/pruning sets
 *   of objects, planning (SSA dry-runs), waiting, loading manifests, normalising and masking,
 *   drift rules;
 * - Helm: the helm CLI behind one interface, release storage, chart and values helpers;
 * - load balancers: the `lb_switch` providers;
 * - processes: {@link tether} (children never outlive kplay), approval gates;
 * - running a playbook with locks, run records and a resume journal: {@link runManaged}.
 */

export * from './contract.js';
export * from './k8s.js';
export * from './helm.js';
export * from './local.js';
export * from './window.js';
