/**
 * `kplay/sdk`, part 5 — around a maintenance window: the `lb_switch` providers, approval gates,
 * analysis gates ({@link analysisGate}), async jobs, and {@link runManaged} — a playbook run with
 * cluster locks, run records and a resume journal, exactly as `kplay run` does it, for programs
 * that drive kplay.
 */
export { runManaged, type ManagedRunOptions, type ManagedRunResult } from '../run/managed-run.js';
export { readJournal, type JournalState } from '../audit/journal.js';
export { PROVIDERS, type LbSwitchArgs } from '../lb/index.js';
export { GATE_NAME, gateRef, gateState, openGate } from '../audit/gate.js';
export { asyncJob, cleanupAsyncJob, type AsyncJob, type AsyncOutcome } from '../executor/async-jobs.js';
export * as analysisGate from '../analysis/index.js';
export { gateProgress, gateValueText, type GateProgressMeasurement } from '../report/gate.js';
