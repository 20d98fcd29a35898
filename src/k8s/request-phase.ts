/**
 * Where a request is when its whole-request bound (the transport's timeout) runs out, said for a
 * person: connecting, the TLS handshake, sending, waiting for headers, or a body that trickles.
 */

/** Where a request is (for the message of a timeout): the bound is on the whole request, whatever arrives meanwhile. */
export interface RequestPhase {
  at: 'connecting' | 'tls' | 'sending' | 'headers' | 'body';
  /** The response's status, once its headers arrived. */
  status?: number;
}

/** The phase a request timed out in, said for a person: `reading the response body (HTTP 200, 12 bytes in 60.0 s: …)`. */
export function describePhase(p: RequestPhase, bodyBytes: number | undefined, elapsedMs: number): string {
  switch (p.at) {
    case 'connecting':
      return 'connecting to the apiserver';
    case 'tls':
      return 'in the TLS handshake';
    case 'sending':
      return 'sending the request';
    case 'headers':
      return 'waiting for the response headers (the request was sent)';
    case 'body':
      return `reading the response body (HTTP ${p.status ?? 0}${bodyBytes !== undefined ? `, ${bodyBytes} bytes in ${(elapsedMs / 1000).toFixed(1)} s` : ''}: the apiserver, or a proxy or load balancer in front of it, sends it too slowly)`;
  }
}
