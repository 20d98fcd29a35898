// Stand-in for each sandbox cluster's ingress (the sandbox has no real ingress controller and
// kwok pods serve no traffic). One small HTTP server per cluster that reads the cluster's webapp
// Deployment and answers like the app behind an ingress would:
//   200 {"cluster","version","available":true,...} when the Deployment is fully rolled out,
//   503 {"available":false,...} while it is not (rolling out, scaled to 0, missing).
// `version` is the Deployment's `app.kubernetes.io/version` label (the chart's appVersion), else
// the image tag of its first container. Used by the demo and the
// end-to-end tests behind HAProxy, so a client going through HAProxy to a cluster that is being
// upgraded (and was not drained) sees 503s.
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
  return { version, available, replicas: want, ready: st.readyReplicas ?? 0, updated: st.updatedReplicas ?? 0 };
}

/**
 * Start one stand-in server.
 * @param {{cluster: string, context: string, kubeconfig: string, port: number, namespace?: string, deployment?: string, broken?: boolean}} o
 * @returns {Promise<{port: number, close: () => Promise<void>, setBroken: (b: boolean) => void}>}
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
  const server = http.createServer(async (req, res) => {
    const s = await read();
    const body = { cluster: o.cluster, ...s };
    if (broken) Object.assign(body, { available: false, error: 'health check broken on purpose (fault injection)' });
    const ok = body.available === true;
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json', connection: 'close' });
    res.end(JSON.stringify(body));
  });
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
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
