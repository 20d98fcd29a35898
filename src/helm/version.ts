/**
 * Helm version detection and the command-line flags that differ between helm 3 and helm 4.
 * Pure functions: `HelmCli` (cli.ts) runs `helm version` and uses these.
 */

/** A parsed helm client version. */
export interface HelmVersion {
  major: number;
  minor: number;
  patch: number;
  /** As helm printed it, e.g. `v4.1.4`. */
  raw: string;
}

/** The oldest helm kplay drives (needs `get metadata -o json` and `--reset-then-reuse-values` era flags). */
export const MIN_HELM = { major: 3, minor: 14 } as const;

/** Message when the helm binary cannot be run at all. */
export function helmNotFoundMessage(binary: string): string {
  return binary === 'helm'
    ? 'helm not found on PATH; install helm ≥ 3.14 or set helm_binary / KPLAY_HELM'
    : `helm not found at '${binary}'; install helm ≥ 3.14 or set helm_binary / KPLAY_HELM`;
}

/**
 * Parse the output of `helm version --template '{{.Version}}'` (`v3.14.2`, `v4.1.4+g05fa379`).
 * @throws Error when the text is not a version.
 */
export function parseHelmVersion(text: string): HelmVersion {
  const raw = text.trim();
  const m = /^v?(\d+)\.(\d+)\.(\d+)(?:[-+][0-9A-Za-z.+-]*)?$/.exec(raw);
  if (!m) throw new Error(`cannot parse helm version '${raw.slice(0, 80)}'`);
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), raw };
}

/**
 * Check that kplay supports this helm. Returns an error message, or `undefined` when supported
 * (3.14 or later, major 3 or 4).
 */
export function unsupportedReason(v: HelmVersion): string | undefined {
  if (v.major < MIN_HELM.major || (v.major === MIN_HELM.major && v.minor < MIN_HELM.minor)) {
    return `helm ${v.raw} is too old; install helm ≥ ${MIN_HELM.major}.${MIN_HELM.minor} or set helm_binary / KPLAY_HELM`;
  }
  if (v.major > 4) return `helm ${v.raw} is not supported yet (kplay drives helm 3.14+ and helm 4)`;
  return undefined;
}

/** What an install/upgrade should do, independent of the helm version. */
export interface UpgradeFlagOptions {
  /** Wait until the release's resources are ready. */
  wait: boolean;
  /** Seconds for `--timeout` (each Kubernetes operation, hooks, and the wait). */
  timeout?: number;
  /** Roll back (uninstall on a first install) when the upgrade fails or times out. */
  atomic: boolean;
  /** Replace resources that cannot be patched (helm 3 `--force`, helm 4 `--force-replace`). */
  force: boolean;
  /** Do not install CRDs from the chart's `crds/` directory. */
  skipCrds: boolean;
  /** Run `helm dependency update` before installing. */
  dependencyUpdate: boolean;
  /** Create the release namespace if missing. */
  createNamespace: boolean;
}

/** `--wait` for the helm major version: helm 4 needs a strategy (`watcher` waits for readiness). */
export function waitFlag(major: number): string {
  return major >= 4 ? '--wait=watcher' : '--wait';
}

/** `--timeout` value (`300s`). */
export function timeoutFlag(seconds: number): string[] {
  return ['--timeout', `${Math.max(1, Math.ceil(seconds))}s`];
}

/**
 * Flags of `helm upgrade --install` (without release, chart, namespace and values files).
 * Always `--reset-values` (the release gets exactly the values given, never old ones) and, on
 * helm 4, `--force-conflicts` so that server-side apply takes back fields someone changed with
 * `kubectl scale`/`edit` (live drift); helm 3's three-way merge repairs them by itself.
 */
export function upgradeFlags(major: number, o: UpgradeFlagOptions): string[] {
  const f: string[] = ['--install', '--reset-values'];
  if (o.createNamespace) f.push('--create-namespace');
  if (o.wait) f.push(waitFlag(major));
  if (o.timeout !== undefined) f.push(...timeoutFlag(o.timeout));
  if (o.atomic) f.push(major >= 4 ? '--rollback-on-failure' : '--atomic');
  if (o.force) f.push(major >= 4 ? '--force-replace' : '--force');
  if (major >= 4) f.push('--force-conflicts');
  if (o.skipCrds) f.push('--skip-crds');
  if (o.dependencyUpdate) f.push('--dependency-update');
  return f;
}

/**
 * Flags that make `helm template` render exactly what an upgrade would apply: against the
 * cluster's real capabilities (helm 4 `--dry-run=server`, helm 3 `--validate`), as an upgrade
 * when the release exists, without test hooks.
 */
export function templateFlags(major: number, o: { isUpgrade: boolean; skipCrds: boolean; dependencyUpdate: boolean }): string[] {
  const f: string[] = [major >= 4 ? '--dry-run=server' : '--validate', '--skip-tests'];
  if (o.isUpgrade) f.push('--is-upgrade');
  if (o.skipCrds) f.push('--skip-crds');
  if (o.dependencyUpdate) f.push('--dependency-update');
  return f;
}

/** Flags of `helm rollback` / `helm uninstall` that wait. */
export function waitFlags(major: number, wait: boolean, timeout?: number): string[] {
  const f: string[] = [];
  if (wait) f.push(waitFlag(major));
  if (timeout !== undefined) f.push(...timeoutFlag(timeout));
  return f;
}
