/**
 * helm's view of a cluster: a private kubeconfig holding exactly the context kplay's client
 * resolved when it connected (k8s/resolved.ts: server, CA, client credentials, exec/auth-provider
 * plugin, proxy, TLS server name, namespace). helm runs with `--kubeconfig FILE --kube-context
 * NAME` of it and without the environment that would point it elsewhere (`KUBECONFIG`,
 * `HELM_KUBE*`), so a kubeconfig rewritten mid-run cannot send a release to another cluster than
 * the one the run locked. One file per connection per run, mode 0600 in a private 0700 directory,
 * removed when the run ends (also when it fails or is interrupted: the run ends its adapters) and
 * at the latest when the process exits. The file holds credentials: it is never printed, only its
 * path is on helm's command line.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RunScopedAdapter } from '../core/module.js';
import { resolvedContextName, resolvedKubeconfig, type ResolvedContext } from '../k8s/resolved.js';
import type { HelmTarget } from './cli.js';

/** The adapter name of a cluster's private kubeconfigs. */
export const PRIVATE_KUBECONFIGS = 'helm-private-kubeconfigs';

/** Directories not removed yet (removed at process exit if the run could not). */
const live = new Set<string>();
let exitHook = false;

function removeDir(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    // gone already, or not ours to remove any more
  }
  live.delete(dir);
}

/** The private kubeconfigs of one cluster in one run (see the file header). */
export class PrivateKubeconfigs implements RunScopedAdapter {
  private dir: string | undefined;
  private readonly files = new Map<ResolvedContext, string>();

  /** helm's target for `resolved`: its private kubeconfig (written on first use) and context. */
  target(resolved: ResolvedContext): HelmTarget {
    let file = this.files.get(resolved);
    if (file === undefined) {
      if (this.dir === undefined) {
        // mkdtemp makes the directory 0700: no one else can list or open what is in it
        this.dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-conn-'));
        live.add(this.dir);
        if (!exitHook) {
          exitHook = true;
          process.on('exit', () => [...live].forEach(removeDir));
        }
      }
      file = path.join(this.dir, `kubeconfig-${this.files.size + 1}.json`);
      writeFileSync(file, JSON.stringify(resolvedKubeconfig(resolved)), { mode: 0o600, flag: 'wx' });
      this.files.set(resolved, file);
    }
    return { kubeContext: resolvedContextName(resolved), kubeconfig: file };
  }

  /** Remove the files (the run is over: no helm of it runs any more). */
  endOfRun(): Promise<void> {
    if (this.dir !== undefined) removeDir(this.dir);
    this.dir = undefined;
    this.files.clear();
    return Promise.resolve();
  }
}

/** Environment variables that would point helm at another cluster or credentials than its kubeconfig's. */
const KUBE_ENV = /^(KUBECONFIG|HELM_KUBE[A-Z_]*)$/;

/** `env` without `KUBECONFIG` and helm's `HELM_KUBE*` overrides (API server, token, CA, context, impersonation, TLS). */
export function isolatedHelmEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !KUBE_ENV.test(k)));
}
