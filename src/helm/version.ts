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
 * Parse the output of `helm version --template '{{.Version}}'` (`v3.14.2`, `v4.1.4+g05fa379`, `v3.19`).
 * @throws Error when the text is not a version.
 */
export function parseHelmVersion(text: string): HelmVersion {
  const raw = text.trim();
  // a helm built from source without release flags prints `v3.19` (no patch)
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+][0-9A-Za-z.+-]*)?$/.exec(raw);
  if (!m) throw new Error(`cannot parse helm version '${raw.slice(0, 80)}'`);
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3] ?? 0), raw };
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
  /**
   * Skip helm's client-side OpenAPI check (`--disable-openapi-validation`): only where the server
   * checks the same fields, see {@link serverChecksFields}.
   * @default false
   */
  skipClientCheck?: boolean;
  /**
   * The upgrade applies client-side: helm 4 upgrades a release the way it was applied (`auto`),
   * so a release stored as `csa` or by helm 3 (no apply method) is patched client-side — where
   * `--force-conflicts` is refused and helm's three-way merge repairs live drift by itself.
   * @default false
   */
  clientSideApply?: boolean;
  /** The release description helm stores with the new revision (`--description`); helm's own when unset. */
  description?: string;
  /**
   * `--reuse-values` instead of `--reset-values`: helm merges the old release's values (and keeps
   * its chart's default values), as kubernetes.core's `reuse_values`/`reset_values: false` ask.
   * @default false
   */
  reuseValues?: boolean;
  /** More flags, appended as they are (`--history-max 5`, `--no-hooks`). */
  extra?: string[];
}

/** What decides whether helm's client-side OpenAPI check adds anything, see {@link serverChecksFields}. */
export interface FieldCheckFacts {
  /** Helm's major version. */
  helmMajor: number;
  /** The cluster's `gitVersion` (`v1.34.4`); `''` when unknown. */
  serverVersion: string;
  /** `install` when no release exists, else the `apply_method` helm stored with the newest revision (`ssa`, `csa`, `''`). */
  applyMethod: string;
  /** Whether the chart may render a `List` (or a `…List` kind, or a kind kplay cannot see), see `mayRenderLists`. */
  mayRenderLists: boolean;
}

/**
 * Whether helm's client-side OpenAPI check of an install/upgrade is redundant, so that
 * `--disable-openapi-validation` changes nothing but its cost (it fetches and parses the OpenAPI
 * v3 document of every group-version in the chart, twice per upgrade: ~0.15–0.3 s of CPU per
 * helm run, most of helm's own work for a small chart).
 *
 * Helm 4 builds its validator as kubectl does (kubectl `Factory.Validator`, a "param verifying
 * schema"): an object is checked on the client ONLY when the server does not support the
 * `fieldValidation` parameter for its kind — and every kind of Kubernetes ≥ 1.27 supports it,
 * except the kind `List` itself, whose items helm would then check on the client before applying
 * anything. With server-side apply (helm 4 installs with it, and upgrades with it a release
 * stored as `ssa`) every object is sent with `fieldValidation=Strict`, so the server rejects the
 * same unknown and duplicate fields, with the same message.
 *
 * True when: helm ≥ 4, the cluster is Kubernetes ≥ 1.27, the release is installed or stored as
 * `ssa`, and the chart cannot render a `List`.
 */
export function serverChecksFields(f: FieldCheckFacts): boolean {
  if (f.helmMajor < 4 || f.mayRenderLists) return false;
  if (f.applyMethod !== 'install' && f.applyMethod !== 'ssa') return false;
  const m = /^v?(\d+)\.(\d+)/.exec(f.serverVersion);
  if (!m) return false;
  const major = Number(m[1]);
  return major > 1 || (major === 1 && Number(m[2]) >= 27);
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
 * helm 4 applying server-side, `--force-conflicts` so that server-side apply takes back fields
 * someone changed with `kubectl scale`/`edit` (live drift); a client-side apply (helm 3, or helm 4
 * upgrading a release stored as `csa` or by helm 3) repairs them by itself with a three-way merge.
 */
export function upgradeFlags(major: number, o: UpgradeFlagOptions): string[] {
  const f: string[] = ['--install', o.reuseValues ? '--reuse-values' : '--reset-values'];
  if (o.createNamespace) f.push('--create-namespace');
  if (o.wait) f.push(waitFlag(major));
  if (o.timeout !== undefined) f.push(...timeoutFlag(o.timeout));
  if (o.atomic) f.push(major >= 4 ? '--rollback-on-failure' : '--atomic');
  if (o.force) f.push(major >= 4 ? '--force-replace' : '--force');
  if (major >= 4 && !o.clientSideApply) f.push('--force-conflicts');
  if (o.skipCrds) f.push('--skip-crds');
  if (o.dependencyUpdate) f.push('--dependency-update');
  if (o.skipClientCheck) f.push('--disable-openapi-validation');
  if (o.description) f.push('--description', o.description);
  if (o.extra) f.push(...o.extra);
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
