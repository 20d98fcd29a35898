/**
 * Where a cluster's chain of run records ends, kept in the cluster: ConfigMap
 * `kplay-system/kplay-run-head` (label `kplay.dev/record=head`) holds the run id and the SHA-256
 * of the record written last, and a copy of that record's text.
 *
 * A run moves the head to its own record *before* writing the record, in one compare-and-swap (a
 * patch carrying the head's `resourceVersion`, or a create when there is none), and links its
 * record to the head it replaced. Two runs that end at the same moment without the cluster's lock
 * (`--no-lock`; or one locked and one not) therefore never both link to the same record — a fork
 * that `kplay history verify` rightly reports as tampering: the apiserver lets one swap through
 * and answers the other 409, and the loser reads the new head and links to that.
 *
 * The head moves first, so for a moment it names a record not yet written — and one never
 * written when that run's write fails (the cluster went away, the process was killed). The copy
 * in the head is what makes that safe: the next run writes the record it links to from the copy
 * when that record is not among those it listed (the same text: the same digest, and the same
 * object as the first writer's, so writing it twice changes nothing). No gap, no fork, no clock.
 *
 * A cluster whose records were written by a kplay before heads has none: the first run links to
 * the end of the records' chain as before (`chainOrder`) and creates it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeApiError } from '../k8s/errors.js';
import type { KubeClient, KubeObject } from '../k8s/types.js';
import { sha256, type ChainLink } from './chain.js';
import { asLink, RECORD_LABEL } from './record-read.js';
import { createSystemNamespace, SYSTEM_NAMESPACE } from './system.js';

/** Name of the head ConfigMap in `kplay-system`. */
export const HEAD_NAME = 'kplay-run-head';

/** How many times a run tries to move the head before giving up (each loss means another run's record went in first). */
export const HEAD_ATTEMPTS = 25;

const headRef = { apiVersion: 'v1', kind: 'ConfigMap', name: HEAD_NAME, namespace: SYSTEM_NAMESPACE };

/** Whether `obj` (from a listing of `kplay-system`) is the head rather than a record. */
export function isHead(obj: KubeObject): boolean {
  return obj.metadata.name === HEAD_NAME;
}

/** The link a head holds (`undefined`: none, or not a link — edited by hand). */
export function headLink(head: KubeObject | undefined): ChainLink | undefined {
  const data = head?.data;
  return typeof data === 'object' && data !== null ? (asLink(data) ?? undefined) : undefined;
}

function headObject(link: ChainLink, text: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: HEAD_NAME, namespace: SYSTEM_NAMESPACE, labels: { 'app.kubernetes.io/managed-by': 'kplay', [RECORD_LABEL]: 'head' } },
    data: { run_id: link.run_id, sha256: link.sha256, 'record.json': text },
  };
}

/** A swap the apiserver refused because the head changed (or appeared) since it was read. */
function lostSwap(e: unknown): boolean {
  return e instanceof KubeApiError && e.status === 409;
}

function missingNamespace(e: unknown): boolean {
  return e instanceof KubeApiError && e.status === 404 && e.body?.details?.kind === 'namespaces';
}

/** A record as the head carries it: its run id and its text (the digest the head names). */
export interface HeadCopy {
  run_id: string;
  text: string;
}

/** The head moved to a record. */
export interface ClaimedHead {
  /** The link the record must carry (`null`: the cluster's first record). */
  prev: ChainLink | null;
  /** The record `prev` names, as the head it replaced carried it (absent: a head of no copy, or none). */
  prevCopy: HeadCopy | undefined;
}

/** The copy of its record a head carries, if it matches the digest the head names. */
function copyOf(head: KubeObject | undefined, link: ChainLink | undefined): HeadCopy | undefined {
  const data = head?.data;
  const text = typeof data === 'object' && data !== null ? (data as Record<string, unknown>)['record.json'] : undefined;
  return link && typeof text === 'string' && sha256(text) === link.sha256 ? { run_id: link.run_id, text } : undefined;
}

/**
 * Move `client`'s head to the record `make` builds. `make(prev)` gets the link the record must
 * carry and returns the record's text; it is called again whenever another run moved the head
 * first. `known` is the head as read earlier (from the records' listing; `undefined`: there was
 * none), `fallback` the end of the records' chain for a cluster without a head.
 */
export async function claimHead(client: KubeClient, runId: string, known: KubeObject | undefined, fallback: () => ChainLink | null, make: (prev: ChainLink | null) => string): Promise<ClaimedHead> {
  let head = known;
  for (let attempt = 1; ; attempt++) {
    const link = headLink(head);
    const prev = link ?? fallback();
    const text = make(prev);
    const rv = head?.metadata.resourceVersion;
    const next = headObject({ run_id: runId, sha256: sha256(text) }, text);
    try {
      // a merge patch carrying the resourceVersion is refused (409) when the head moved: the same
      // precondition as an update, with the verbs a record's write already needs (create, patch)
      if (rv !== undefined) await client.mergePatch(headRef, { metadata: { resourceVersion: rv }, data: next.data });
      else await client.create(next);
      return { prev, prevCopy: copyOf(head, link) };
    } catch (e) {
      if (attempt < HEAD_ATTEMPTS && missingNamespace(e)) {
        // no kplay-system, so no head either: make it, then create the head
        await createSystemNamespace(client);
        head = undefined;
        continue;
      }
      if (!lostSwap(e)) throw e;
      if (attempt >= HEAD_ATTEMPTS) throw new Error(`the run record was not linked: ${attempt} other runs wrote their records to this cluster first (retry, or run under the cluster's lock)`);
      // another run's record went in first: link to it (a short, growing pause spreads runs that keep colliding)
      await sleep(Math.floor(Math.random() * 20 * Math.min(attempt, 5)));
      head = await client.get(headRef);
    }
  }
}
