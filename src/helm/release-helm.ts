/**
 * The helm and the Kubernetes client of a release's cluster: helm bound to the connection kplay
 * resolved (a private kubeconfig), its version detected once per binary, and the client of the
 * cluster helm talks to (the inventory's, unless kube_context/kubeconfig override it).
 */
import { connect, kubeFor } from '../k8s/client.js';
import type { KubeClient } from '../k8s/types.js';
import type { ModuleContext } from '../core/module.js';
import { HelmCli, type HelmTarget } from './cli.js';
import { cachedHelmVersion } from './version-cache.js';
import { isolatedHelmEnv, PRIVATE_KUBECONFIGS, PrivateKubeconfigs } from './private-kubeconfig.js';
import type { HelmVersion } from './version.js';

/** A client for the cluster helm talks to (the inventory's, unless kube_context/kubeconfig override it). */
export async function clientFor(ctx: ModuleContext, kubeContext: string, kubeconfig: string | undefined): Promise<KubeClient> {
  if (kubeContext === ctx.cluster.context && kubeconfig === ctx.cluster.kubeconfig) return kubeFor(ctx);
  return ctx.adapter<KubeClient>(`k8s:${kubeContext}:${kubeconfig ?? ''}`, () => connect({ name: ctx.cluster.name, context: kubeContext, kubeconfig }));
}

/**
 * The helm of a task, bound to a cluster: its version is detected once per binary (and cached
 * across runs), nothing else runs until the first command.
 */
export async function helmFor(ctx: ModuleContext, binary: string, target: HelmTarget, env?: NodeJS.ProcessEnv): Promise<HelmCli> {
  const version = await helmVersion(ctx, binary);
  return new HelmCli(version, { binary, target, mask: (s) => ctx.mask(s), log: (m) => ctx.log.debug(m), ...(env ? { env } : {}) });
}

/** The version of helm `binary`, detected once per binary (and cached across runs); throws a HelmError when helm is missing or too old. */
function helmVersion(ctx: ModuleContext, binary: string): Promise<HelmVersion> {
  const mask = (s: string): string => ctx.mask(s);
  return ctx.adapter<HelmVersion>(`helm-version:${binary}`, () => cachedHelmVersion(binary, () => HelmCli.detectVersion({ binary, mask }, { signal: ctx.signal })));
}

/**
 * The helm of a task bound to exactly the connection `client` resolved when it connected: a
 * private kubeconfig of it (see private-kubeconfig.ts), without `KUBECONFIG`/`HELM_KUBE*` — so
 * helm reaches the server kplay's client (and the run's lock) reaches, even when the kubeconfig
 * file was rewritten since. `fallback` only for a client that has no resolved context (a test double).
 */
export async function helmForClient(ctx: ModuleContext, binary: string, client: KubeClient, fallback: HelmTarget): Promise<HelmCli> {
  if (!client.resolved) return helmFor(ctx, binary, fallback);
  const files = await ctx.adapter<PrivateKubeconfigs>(PRIVATE_KUBECONFIGS, () => Promise.resolve(new PrivateKubeconfigs()));
  return helmFor(ctx, binary, files.target(client.resolved), isolatedHelmEnv(process.env));
}

/** The Kubernetes client of the cluster helm talks to (the task's own when the context and kubeconfig are the inventory's). */
export function releaseClient(ctx: ModuleContext, kubeContext: string, kubeconfig: string | undefined): Promise<KubeClient> {
  return clientFor(ctx, kubeContext, kubeconfig);
}

/** The helm of a release's cluster (`kubeContext`/`kubeconfig` as the task names it), bound to its client's resolved connection ({@link helmForClient}). */
export async function releaseHelm(ctx: ModuleContext, binary: string, kubeContext: string, kubeconfig: string | undefined): Promise<HelmCli> {
  await helmVersion(ctx, binary); // a missing helm is said before anything connects
  return helmForClient(ctx, binary, await clientFor(ctx, kubeContext, kubeconfig), { kubeContext, kubeconfig });
}
