// Stand-in for each sandbox cluster's ingress (the sandbox has no real ingress controller and
// kwok pods serve no traffic). One small HTTP server per cluster that reads the cluster's webapp
// Deployment and answers like the app behind an ingress would:
//   200 {"cluster","version","available":true,...} when the Deployment is fully rolled out,
//   503 {"available":false,...} while it is not (rolling out, scaled to 0, missing),
//   500 {"error":"..."} for a share of the requests when the Deployment runs a bad release: its
//       pod template has the annotation `demo.kplay.dev/error-rate` (a fraction, e.g. "0.5"; the
//       demo chart webapp-1.2.0 ships with it). Errors are spread evenly (every 2nd request at
//       0.5), not at random, so tests are deterministic.
// `version` is the Deployment's `app.kubernetes.io/version` label (the chart's appVersion), else
// the image tag of its first container.
// GET /metrics serves Prometheus counters of the requests it answered, as an ingress controller
// exports them: `webapp_requests_total{cluster}` and `webapp_errors_total{cluster}` (status >= 500).
// Besides the requests coming through HAProxy, the stand-in serves in-cluster traffic (other
// services calling webapp: `inClusterRps` requests per second, 10 by default, 0 to turn off),
// counted only while a pod is ready (the Service routes only to ready pods), so a drained cluster
// still has an error rate to measure and a rollout or a first install does not count as errors.
// Used by the demo and the end-to-end tests behind HAProxy, so a client going through HAProxy to a
// cluster that is being upgraded (and was not drained) sees 503s.
import http from 'node:http';
import { AppsV1Api, KubeConfig } from '@kubernetes/client-node';

/** Is a Deployment fully rolled out (same rule as kplay's wait_for, simplified)? */
export function deploymentState(dep) {
  const spec = dep?.spec ?? {};
  const st = dep?.status ?? {};
  const want = spec.replicas ?? 1;
  const image = spec.template?.spec?.containers?.[0]?.image ?? '';
  const label = dep?.metadata?.labels?.['app.kubernetes.io/version'];
  const version = typeof label === 'string' && label ? label : image.includes(':') ? image.slice(image.lastIndexOf(':') + 1) : image;
  const available =
    (st.observedGeneration ?? 0) >= (dep?.metadata?.generation ?? 0) &&
    want > 0 &&
    (st.updatedReplicas ?? 0) === want &&
    (st.availableReplicas ?? 0) === want &&
    (st.readyReplicas ?? 0) === want &&
    (st.replicas ?? 0) === want;
  const rate = Number(spec.template?.metadata?.annotations?.[ERROR_RATE_ANNOTATION] ?? 0);
  const errorRate = Number.isFinite(rate) && rate > 0 ? Math.min(rate, 1) : 0;
  return { version, available, replicas: want, ready: st.readyReplicas ?? 0, updated: st.updatedReplicas ?? 0, errorRate };
}

/** The pod template annotation that makes the stand-in fail that fraction of the requests (a bad release). */
export const ERROR_RATE_ANNOTATION = 'demo.kplay.dev/error-rate';

/**
 * Start one stand-in server.
 * @param {{cluster: string, context: string, kubeconfig: string, port: number, namespace?: string, deployment?: string, broken?: boolean, inClusterRps?: number}} o
 * @returns {Promise<{port: number, close: () => Promise<void>, setBroken: (b: boolean) => void, counters: () => {requests: number, errors: number}}>}
 */
export async function startStandin(o) {
  const kc = new KubeConfig();
  kc.loadFromFile(o.kubeconfig);
  kc.setCurrentContext(o.context);
  const apps = kc.makeApiClient(AppsV1Api);
  const ns = o.namespace ?? 'webapp';
  const name = o.deployment ?? 'webapp';
  let broken = o.broken === true;
  let cache = { at: 0, value: undefined };
  const read = async () => {
    if (Date.now() - cache.at < 200 && cache.value) return cache.value;
    let value;
    try {
      value = deploymentState(await apps.readNamespacedDeployment({ name, namespace: ns }));
    } catch (e) {
      const code = e?.code ?? e?.statusCode;
      value = { version: '', available: false, replicas: 0, ready: 0, updated: 0, error: code === 404 ? `no deployment ${ns}/${name}` : String(e?.message ?? e).slice(0, 200) };
    }
    cache = { at: Date.now(), value };
    return value;
  };
  const counters = { requests: 0, errors: 0 };
  let errorDebt = 0;
  /** One request to the app: does the bad release fail it? (evenly spread: the debt reaches 1 every 1/rate requests) */
  const failsByBug = (s) => {
    errorDebt += s.errorRate ?? 0;
    if (errorDebt < 1) return false;
    errorDebt -= 1;
    return true;
  };
  const count = (status) => {
    counters.requests++;
    if (status >= 500) counters.errors++;
  };
  const server = http.createServer(async (req, res) => {
    if (req.url === '/metrics') {
      const lines = [
        '# HELP webapp_requests_total Requests answered by webapp on this cluster.',
        '# TYPE webapp_requests_total counter',
        `webapp_requests_total{cluster="${o.cluster}"} ${counters.requests}`,
        '# HELP webapp_errors_total Requests answered with a 5xx status.',
        '# TYPE webapp_errors_total counter',
        `webapp_errors_total{cluster="${o.cluster}"} ${counters.errors}`,
      ];
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4', connection: 'close' });
      res.end(`${lines.join('\n')}\n`);
      return;
    }
    const s = await read();
    const body = { cluster: o.cluster, ...s };
    if (broken) Object.assign(body, { available: false, error: 'health check broken on purpose (fault injection)' });
    let status = body.available === true ? 200 : 503;
    if (status === 200 && failsByBug(s)) {
      status = 500;
      Object.assign(body, { error: `version ${s.version} failed this request (${ERROR_RATE_ANNOTATION}: ${s.errorRate})` });
    }
    count(status);
    res.writeHead(status, { 'content-type': 'application/json', connection: 'close' });
    res.end(JSON.stringify(body));
  });
  // In-cluster traffic: served by ready pods (the Service routes only to them), so a rollout does
  // not fail it; a bad release does.
  const rps = o.inClusterRps ?? 10;
  let busy = false;
  const timer =
    rps > 0
      ? setInterval(async () => {
          if (busy) return;
          busy = true;
          try {
            const s = await read();
            // no ready pod, no backend to serve (or count) in-cluster calls
            if (s.ready > 0) count(failsByBug(s) ? 500 : 200);
          } finally {
            busy = false;
          }
        }, Math.max(1, Math.round(1000 / rps)))
      : undefined;
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, '127.0.0.1', resolve);
  });
  const port = server.address().port;
  return {
    port,
    setBroken: (b) => {
      broken = b;
    },
    counters: () => ({ ...counters }),
    close: () =>
      new Promise((resolve) => {
        if (timer) clearInterval(timer);
        server.close(() => resolve());
      }),
  };
}
