/**
 * `any_errors_fatal` as ansible-core's linear strategy applies it: when a task of that kind fails
 * on one cluster (also a `run_once` or host-loop-bypassing task, which are fatal by nature), every
 * other cluster of the batch still running is marked failed where it stands
 * (`PlayIterator.mark_host_failed`) — in a block with a `rescue` it goes to the rescue, in a rescue
 * to the `always`, else it leaves the play. A mark is no failure of its own: the PLAY RECAP counts
 * neither a failure nor a rescue for it. A marked cluster is in ansible-core's `_failed_hosts`
 * from then on, so it leaves the later plays even when a rescue handled the mark.
 *
 * A failed `run_once` task marks the others twice (once for the run_once failure, once as fatal):
 * the second mark fails them out of the innermost block's rescue (or, without one, its always).
 */
import type { ClusterState } from './state.js';

/** The marks of one play on one batch. */
export class FatalMarks {
  /** Failed by another cluster's failure, and not since by one of its own: how many marks are still to handle. */
  private readonly marked = new Map<string, 1 | 2>();
  /** Every cluster marked in this play (ansible-core's `_failed_hosts`). */
  private readonly leaving = new Set<string>();

  constructor(
    private readonly batch: readonly ClusterState[],
    /** Off in a shard of a fleet run (the fleet's budget decides there). */
    private readonly enabled: boolean,
  ) {}

  /**
   * After a task: `fatal` is its kind, `failed` whether it failed (not ignored) or was unreachable
   * on a cluster, `twice` whether it was a run_once task.
   */
  after(fatal: boolean, failed: boolean, twice = false): void {
    if (!this.enabled || !fatal || !failed) return;
    for (const c of this.batch) {
      if (!c.active) continue;
      c.failed = true;
      this.marked.set(c.name, twice ? 2 : 1);
      this.leaving.add(c.name);
    }
  }

  /** Is the failure of `cs` a mark? */
  isMarked(cs: ClusterState): boolean {
    return this.marked.has(cs.name);
  }

  /** Was `cs` marked twice (it skips the next rescue, or without one the next always)? Then that mark is spent. */
  spendSecond(cs: ClusterState): boolean {
    if (this.marked.get(cs.name) !== 2) return false;
    this.marked.set(cs.name, 1);
    return true;
  }

  /** The failure of `cs` is handled (a rescue runs) or replaced by its own: forget the mark; was it one? */
  take(cs: ClusterState): boolean {
    return this.marked.delete(cs.name);
  }

  /** `meta: clear_host_errors`: no cluster is marked, none leaves the later plays. */
  clear(): void {
    this.marked.clear();
    this.leaving.clear();
  }

  /** The play is over: the marked clusters leave the later plays. */
  endOfPlay(): void {
    for (const c of this.batch) if (this.leaving.has(c.name) && !c.unreachable) c.failed = true;
  }
}
