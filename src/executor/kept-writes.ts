/**
 * A task that kplay ends for its own reason (the lock lost, its timeout) after the module wrote
 * something: the failure keeps what the module's result says it wrote.
 */
import type { ModuleResult } from '../core/module.js';
import { writtenNote, type WrittenEntry } from '../core/results.js';
import { isRecord } from '../core/shape.js';

/**
 * `failure` (kplay's own wording of why a task ended: the lock lost, its timeout) keeping what the
 * module's failed result `r` says it wrote before: `changed` and `written` (see `WrittenResult`).
 */
export function keepingWrites(failure: ModuleResult, r: ModuleResult): ModuleResult {
  if (failure.status !== 'failed' || r.status !== 'failed' || r.changed !== true) return failure;
  const written = r.data?.written;
  const entries = Array.isArray(written) ? written.filter(isWrittenEntry) : [];
  return { ...failure, msg: `${failure.msg}${writtenNote(entries)}`, changed: true, ...(written !== undefined ? { data: { written } } : {}) };
}

/** True for an entry of `WrittenResult`. */
function isWrittenEntry(v: unknown): v is WrittenEntry {
  return isRecord(v) && typeof v.kind === 'string' && typeof v.name === 'string' && typeof v.action === 'string' && typeof v.apiVersion === 'string';
}
