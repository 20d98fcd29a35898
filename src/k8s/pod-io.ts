/**
 * A pod's streaming subresources over the client's transport: `exec` (a WebSocket, the
 * `v5.channel.k8s.io`/`v4.channel.k8s.io` subprotocols kubectl and the Python client speak) and
 * `log` (a plain GET of text). What kubernetes.core's k8s_exec and k8s_log read.
 */
import { KubeApiError, parseStatus, type KubeStatus } from './errors.js';
import { TransportError } from './http.js';
import type { KubeRequests } from './requests.js';
import type { ExecRequest, ExecResult, LogQuery } from './types.js';
import { clientFrame, FrameReader } from './websocket.js';

/** The subprotocols offered, newest first (kube-apiserver ≥ 1.30 speaks v5). */
export const EXEC_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io'] as const;

const enc = encodeURIComponent;

/** Run a command in a container (no stdin, no TTY) and collect its output. */
export async function podExec(req: KubeRequests, x: ExecRequest): Promise<ExecResult> {
  const path = `/api/v1/namespaces/${enc(x.namespace)}/pods/${enc(x.pod)}/exec`;
  const query = [...x.command.map((c) => `command=${enc(c)}`), ...(x.container ? [`container=${enc(x.container)}`] : []), 'stdout=true', 'stderr=true', 'stdin=false', 'tty=false'].join('&');
  let up: Awaited<ReturnType<KubeRequests['transport']['upgrade']>>;
  try {
    up = await req.transport.upgrade(path, query, EXEC_PROTOCOLS, x.signal);
  } catch (e) {
    const status = (e as { status?: unknown }).status;
    const body = (e as { body?: unknown }).body;
    if (e instanceof TransportError && typeof status === 'number' && typeof body === 'string') {
      const st = parseStatus(body);
      throw new KubeApiError(status, st?.reason ?? String(status), st?.message ?? body.slice(0, 300), 'GET', path, req.name, st);
    }
    throw e;
  }
  const { socket, head } = up;
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let status: Buffer | undefined;
  const reader = new FrameReader();
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      x.signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      let st: KubeStatus | undefined;
      try {
        st = status?.length ? (JSON.parse(status.toString('utf8')) as KubeStatus) : undefined;
      } catch {
        st = { status: 'Failure', message: status?.toString('utf8') ?? '' };
      }
      resolve({ stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), status: st });
    };
    const onAbort = (): void => {
      done = true;
      socket.destroy();
      reject(x.signal?.reason instanceof Error ? x.signal.reason : new Error('aborted'));
    };
    x.signal?.addEventListener('abort', onAbort, { once: true });
    const onData = (chunk: Buffer): void => {
      for (const m of reader.push(chunk)) {
        if (m.opcode === 8) {
          socket.write(clientFrame(8, m.data.subarray(0, 2)));
          finish();
          return;
        }
        if (m.opcode === 9) socket.write(clientFrame(10, m.data));
        if ((m.opcode !== 2 && m.opcode !== 1) || m.data.length === 0) continue;
        const channel = m.data[0];
        const data = m.data.subarray(1);
        if (channel === 1) out.push(data);
        else if (channel === 2) err.push(data);
        else if (channel === 3) status = status ? Buffer.concat([status, data]) : data;
      }
    };
    socket.on('data', onData);
    socket.on('end', finish);
    socket.on('close', finish);
    socket.on('error', (e: Error) => {
      if (done) return;
      done = true;
      x.signal?.removeEventListener('abort', onAbort);
      reject(new TransportError(`exec in pod ${x.namespace}/${x.pod}: ${e.message}`, (e as { code?: string }).code, true, false));
    });
    if (head.length) onData(head);
  });
}

/** A container's log, as text (GET `pods/NAME/log`). A missing pod throws a 404 `KubeApiError`. */
export async function podLog(req: KubeRequests, namespace: string, pod: string, q: LogQuery, signal?: AbortSignal): Promise<string> {
  const path = `/api/v1/namespaces/${enc(namespace)}/pods/${enc(pod)}/log`;
  const r = await req.call({ method: 'GET', path, query: { container: q.container, sinceSeconds: q.sinceSeconds, previous: q.previous || undefined, tailLines: q.tailLines }, accept: '*/*', retry: 'read', signal });
  return r.text ?? '';
}
