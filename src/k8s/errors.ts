/**
 * Errors of the Kubernetes layer: a failed API call (`KubeApiError`) and a server-side apply
 * field-ownership conflict (`ApplyConflictError`).
 */

/** A parsed Kubernetes `Status` object (the body of most error responses). */
export interface KubeStatus {
  /** `Failure` for errors. */
  status?: string;
  /** Human readable message from the apiserver. */
  message?: string;
  /** Machine readable reason, e.g. `NotFound`, `Conflict`, `Forbidden`. */
  reason?: string;
  /** HTTP status code. */
  code?: number;
  /** Extra detail; `causes` lists field conflicts for SSA. */
  details?: { name?: string; kind?: string; group?: string; causes?: { reason?: string; message?: string; field?: string }[]; retryAfterSeconds?: number };
}

/** Parse a response body as a `Status`, if it is one. */
export function parseStatus(body: string): KubeStatus | undefined {
  try {
    const v: unknown = JSON.parse(body);
    if (typeof v === 'object' && v !== null && (v as Record<string, unknown>).kind === 'Status') return v as KubeStatus;
  } catch {
    // not JSON
  }
  return undefined;
}

/** A Kubernetes API request that failed with an HTTP error status. */
export class KubeApiError extends Error {
  override name = 'KubeApiError';
  /** Attempts the request took before this answer, when it was retried (see `RetryClass`). */
  attempts?: number;
  /**
   * @param status HTTP status code
   * @param reason Status reason (`NotFound`, `Forbidden`, …) or the HTTP status text
   * @param apiMessage the apiserver's message
   * @param verb HTTP method (GET, PATCH, …)
   * @param path request path (without query)
   * @param cluster inventory name of the cluster
   */
  constructor(
    readonly status: number,
    readonly reason: string,
    readonly apiMessage: string,
    readonly verb: string,
    readonly path: string,
    readonly cluster: string,
    readonly body?: KubeStatus,
  ) {
    super(`${verb} ${path} on cluster ${cluster} failed: ${status} ${reason}: ${apiMessage}`);
  }
}

/** One field conflict of a server-side apply. */
export interface FieldConflict {
  /** The other field manager that owns the field, e.g. `kubectl-edit`. */
  manager: string;
  /** Field path, e.g. `.spec.replicas`. */
  field: string;
  /** The apiserver's message for this conflict. */
  message: string;
}

/** A server-side apply conflict: another field manager owns fields kplay wants to change. */
export class ApplyConflictError extends KubeApiError {
  override name = 'ApplyConflictError';
  /**
   * @param object label of the object, e.g. `Deployment ns/web`
   * @param conflicts the parsed conflicts
   */
  constructor(
    readonly object: string,
    readonly conflicts: FieldConflict[],
    verb: string,
    path: string,
    cluster: string,
    body?: KubeStatus,
  ) {
    super(409, 'Conflict', body?.message ?? 'Apply failed with conflicts', verb, path, cluster, body);
    const byManager = new Map<string, string[]>();
    for (const c of conflicts) byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), c.field]);
    const parts = [...byManager].map(([m, fields]) => `conflict with "${m}": ${fields.join(', ')}`);
    this.message = `server-side apply of ${object} on cluster ${cluster} conflicts with another field manager: ${parts.join('; ') || (body?.message ?? '')}. Set force_conflicts: true to take ownership of these fields.`;
  }
}

/**
 * Parse the conflicts of a 409 apply Status. A cause looks like
 * `{reason: "FieldManagerConflict", message: "conflict with \"kubectl-edit\" using apps/v1", field: ".spec.replicas"}`.
 */
export function parseConflicts(status: KubeStatus | undefined): FieldConflict[] {
  const out: FieldConflict[] = [];
  for (const c of status?.details?.causes ?? []) {
    if (c.reason !== undefined && c.reason !== 'FieldManagerConflict') continue;
    const m = /conflict with "([^"]*)"/.exec(c.message ?? '');
    out.push({ manager: m?.[1] ?? 'unknown', field: c.field ?? '', message: c.message ?? '' });
  }
  if (out.length === 0 && status?.message) {
    // Fallback: parse the message ("Apply failed with 1 conflict: conflict with \"x\" using apps/v1: .spec.replicas")
    for (const m of status.message.matchAll(/conflict with "([^"]*)"[^:]*: ([^\n]+)/g)) out.push({ manager: m[1] ?? '', field: (m[2] ?? '').trim(), message: m[0] });
  }
  return out;
}

/** True for a network-level error code that means the server could not be reached. */
export function isConnectError(e: unknown): boolean {
  const code = errCode(e);
  return code !== undefined && ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'ECONNRESET', 'EPIPE', 'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'ERR_TLS_CERT_ALTNAME_INVALID', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY'].includes(code);
}

/** The `code` property of a node error, if any. */
export function errCode(e: unknown): string | undefined {
  if (typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'string') return (e as { code: string }).code;
  return undefined;
}
