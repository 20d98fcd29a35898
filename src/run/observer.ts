/**
 * What the run service (managed-run.ts) starts around the engine's run of a playbook: observers
 * of its event stream — the cluster locks (locks.ts), the resume journal (journal.ts), the run
 * records (records.ts). Each gets every event, masked, in the order they were started, before the
 * caller's own `onEvent`; each is stopped by the service when the run ends, however it ends.
 */
import type { RunEvent } from '../report/events.js';

/** An observer of a run's events, started and stopped by the run service. */
export interface RunObserver {
  /** An event of the run, masked. Never throws (an observer that cannot go on drops itself). Left out by an observer that follows something else (the locks follow the run's first change to each cluster). */
  onEvent?(e: RunEvent): void;
  /** The run ended (finished, failed or crashed): let go of what the observer holds. Never throws. */
  stop(): Promise<void>;
}
