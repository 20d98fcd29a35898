/**
 * `HelmCli`: the one interface kplay has to helm. Every operation runs the helm binary as a child
 * process against one cluster (`--kube-context`, `--kubeconfig`), reads helm's JSON output, and
 * passes values ONLY through temporary files (mode 0600 in a private 0700 directory, removed
 * afterwards even on failure) — never on the command line, where `ps` would show them.
 *
 * Interruption: when the caller's signal aborts, helm gets SIGTERM and kplay WAITS for it to exit
 * (helm marks the release `failed` instead of leaving it `pending-*`); only if helm is still
 * running after `termGraceMs` is it killed.
 */
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runProcess } from '../core/process.js';
import { HelmError, isReleaseNotFound, trimHelmStderr } from './errors.js';
import { resolveBinary } from './version-cache.js';
import {
  parseChartYaml,
  parseHelmJson,
  parseHistory,
  parseMetadata,
  parseReleaseInfo,
  parseValues,
  type ChartMeta,
  type HistoryEntry,
  type ReleaseInfo,
  type ReleaseMetadata,
} from './release.js';
import { isMap, type Values } from './values.js';
import { parseStoredChart, type StoredChart } from './storage.js';
import { helmNotFoundMessage, parseHelmVersion, templateFlags, unsupportedReason, upgradeFlags, waitFlags, type HelmVersion, type UpgradeFlagOptions } from './version.js';

/** Which cluster helm talks to. */
export interface HelmTarget {
  /** `--kube-context`; helm's current context when unset. */
  kubeContext?: string;
  /** `--kubeconfig`; helm's default (KUBECONFIG, ~/.kube/config) when unset. */
  kubeconfig?: string;
}

/** Options of {@link HelmCli.detect}. */
export interface HelmCliOptions {
  /** Program to run. @default "helm" */
  binary?: string;
  /** Cluster to talk to. */
  target: HelmTarget;
  /** Environment of helm. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Masks secrets in error messages and logs. @default identity */
  mask?: (s: string) => string;
  /** Receives each command line run (for `-vv`). */
  log?: (msg: string) => void;
  /** After SIGTERM on interruption, how long to wait for helm before SIGKILL, ms. @default 600000 */
  termGraceMs?: number;
}

/** A chart as helm accepts it: a local directory or `.tgz`, `repo/chart`, `oci://…`, or a name with `repoUrl`. */
export interface ChartRef {
  /** Path (absolute), `repo/name`, `oci://registry/name`, or a chart name when `repoUrl` is set. */
  chart: string;
  /** Version or constraint (`--version`). */
  version?: string;
  /** Chart repository URL (`--repo`). */
  repoUrl?: string;
  /** How the chart is downloaded (repository/registry TLS, plain HTTP); nothing for a local chart. */
  download?: ChartDownload;
}

/**
 * How helm downloads a chart: the flags `helm show`, `template`, `install` and `upgrade` share
 * (helm 3.13+ and helm 4 alike).
 */
export interface ChartDownload {
  /** `--insecure-skip-tls-verify`: do not check the repository's or registry's certificate. */
  insecureSkipTlsVerify?: boolean;
  /** `--plain-http`: talk to an OCI registry over HTTP. */
  plainHttp?: boolean;
  /** `--pass-credentials`: send the repository credentials to every domain. */
  passCredentials?: boolean;
  /** `--ca-file`: CA bundle of the repository's HTTPS server. */
  caFile?: string;
  /** `--cert-file`: client certificate for the repository. */
  certFile?: string;
  /** `--key-file`: client key for the repository. */
  keyFile?: string;
}

/** The helm flags of a {@link ChartDownload}, in a fixed order. */
export function downloadFlags(d: ChartDownload | undefined): string[] {
  if (!d) return [];
  return [
    ...(d.insecureSkipTlsVerify ? ['--insecure-skip-tls-verify'] : []),
    ...(d.plainHttp ? ['--plain-http'] : []),
    ...(d.passCredentials ? ['--pass-credentials'] : []),
    ...(d.caFile ? ['--ca-file', d.caFile] : []),
    ...(d.certFile ? ['--cert-file', d.certFile] : []),
    ...(d.keyFile ? ['--key-file', d.keyFile] : []),
  ];
}

/** The output of one helm run. */
export interface HelmRun {
  stdout: string;
  stderr: string;
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A command that changed something, as run (masked), with its output (masked). */
export interface HelmWrite {
  command: string;
  stdout: string;
  stderr: string;
}

/** Per-call options. */
export interface CallOptions {
  /** Abort (SIGTERM, then wait) when this aborts. */
  signal?: AbortSignal;
  /** Text for helm's standard input (`--password-stdin`). */
  input?: string;
}

/** Values for a command: written to a temporary file and passed with `-f`. */
export type ValuesInput = Values | undefined;

/** Arguments selecting the chart: `[chart, --version v, --repo url, download flags…]`. */
export function chartArgs(ref: ChartRef): string[] {
  const a = [ref.chart];
  if (ref.version) a.push('--version', ref.version);
  if (ref.repoUrl) a.push('--repo', ref.repoUrl);
  a.push(...downloadFlags(ref.download));
  return a;
}

/** Write `values` to a private temporary file, run `fn(path)`, and always remove the file. */
export async function withValuesFile<T>(values: Values, fn: (file: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kplay-helm-'));
  try {
    const file = path.join(dir, 'values.yaml');
    // JSON, which helm reads as YAML: a YAML dump could leave a string such as `yes`, `NO` or `y`
    // unquoted, and helm's YAML 1.1 would read it as a boolean (keys too).
    await writeFile(file, JSON.stringify(values), { mode: 0o600, flag: 'wx' });
    return await fn(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** One helm binary bound to one cluster. Create with {@link HelmCli.detect}. */
export class HelmCli {
  /** The program run. */
  readonly binary: string;

  /**
   * Bind a helm binary whose version is already known (see {@link HelmCli.detectVersion}).
   * @param version the binary's version
   */
  constructor(
    readonly version: HelmVersion,
    private readonly opts: HelmCliOptions,
  ) {
    this.binary = opts.binary ?? 'helm';
  }

  /**
   * Run `helm version` and check it (≥ 3.14, major 3 or 4).
   * @throws HelmError when helm cannot be run (`helm not found on PATH; …`) or is unsupported.
   */
  static async detectVersion(opts: Pick<HelmCliOptions, 'binary' | 'env' | 'mask'>, call: CallOptions = {}): Promise<HelmVersion> {
    const binary = opts.binary ?? 'helm';
    const r = await runHelm(binary, ['version', '--template', '{{.Version}}'], opts, call.signal);
    if (r.code !== 0) throw new HelmError(`${binary} version`, trimHelmStderr(r.stderr || r.stdout, opts.mask), r.code, r.signal);
    let v: HelmVersion;
    try {
      v = parseHelmVersion(r.stdout);
    } catch (e) {
      throw new HelmError(`${binary} version`, e instanceof Error ? e.message : String(e), r.code);
    }
    const bad = unsupportedReason(v);
    if (bad) throw new HelmError(`${binary} version`, bad, null);
    return v;
  }

  /** {@link HelmCli.detectVersion} then bind. */
  static async detect(opts: HelmCliOptions, call: CallOptions = {}): Promise<HelmCli> {
    return new HelmCli(await HelmCli.detectVersion(opts, call), opts);
  }

  /** The cluster this helm talks to. */
  get target(): HelmTarget {
    return this.opts.target;
  }

  /** Helm's major version (3 or 4). */
  get major(): number {
    return this.version.major;
  }

  private targetArgs(): string[] {
    const t = this.opts.target;
    return [...(t.kubeContext ? ['--kube-context', t.kubeContext] : []), ...(t.kubeconfig ? ['--kubeconfig', t.kubeconfig] : [])];
  }

  /**
   * The last command that changed a release or a repository (install, upgrade, rollback,
   * uninstall, `repo add`/`remove`): its masked command line and output, as kubernetes.core
   * registers them (`command`, `stdout`, `stderr`).
   */
  lastWrite: HelmWrite | undefined;

  /**
   * Run helm with `args` (+ the target flags). Resolves with the output; never throws for a
   * non-zero exit. `write`: remember it as {@link HelmCli.lastWrite}.
   */
  async run(args: string[], call: CallOptions = {}, write = false): Promise<HelmRun> {
    const full = [...args, ...this.targetArgs()];
    const command = this.mask(`${this.binary} ${full.map(shellWord).join(' ')}`);
    this.opts.log?.(command);
    const r = await runHelm(this.binary, full, this.opts, call.signal, call.input);
    if (write) this.lastWrite = { command, stdout: this.mask(r.stdout), stderr: this.mask(r.stderr) };
    return r;
  }

  /** Run helm and throw a {@link HelmError} (stderr trimmed and masked) unless it exits 0. */
  async runOk(what: string, args: string[], call: CallOptions = {}, write = false): Promise<HelmRun> {
    const r = await this.run(args, call, write);
    if (r.code !== 0) throw this.error(what, r, call.signal);
    return r;
  }

  /** Run helm with `values` passed as a private temporary file (`-f FILE`). */
  async runWithValues(what: string, args: string[], values: ValuesInput, call: CallOptions = {}, write = false): Promise<HelmRun> {
    if (values === undefined) return this.runOk(what, args, call, write);
    return withValuesFile(values, (file) => this.runOk(what, [...args, '-f', file], call, write));
  }

  /** The error for a failed run. */
  error(what: string, r: HelmRun, signal?: AbortSignal): HelmError {
    const interrupted = signal?.aborted === true;
    return new HelmError(what, trimHelmStderr(r.stderr || r.stdout, (s) => this.mask(s)), r.code, r.signal, interrupted);
  }

  private mask(s: string): string {
    return this.opts.mask ? this.opts.mask(s) : s;
  }

  /** `helm status -o json` (of `revision`, else the newest); `undefined` when the release (or revision) does not exist. */
  async status(name: string, namespace: string, call: CallOptions = {}, revision?: number): Promise<ReleaseInfo | undefined> {
    const r = await this.run(['status', name, '-n', namespace, '-o', 'json', ...(revision !== undefined ? ['--revision', String(revision)] : [])], call);
    if (r.code !== 0) {
      if (isReleaseNotFound(r.stderr)) return undefined;
      throw this.error(`helm status ${name}`, r, call.signal);
    }
    return parseReleaseInfo(parseHelmJson(r.stdout, 'helm status'));
  }

  /** `helm get values -o json`: the user-supplied values of `revision`, else of the current revision. */
  async getValues(name: string, namespace: string, call: CallOptions = {}, revision?: number): Promise<Values> {
    const r = await this.runOk(`helm get values ${name}`, ['get', 'values', name, '-n', namespace, '-o', 'json', ...(revision !== undefined ? ['--revision', String(revision)] : [])], call);
    return parseValues(parseHelmJson(r.stdout, 'helm get values'));
  }

  /** `helm get metadata -o json`. */
  async getMetadata(name: string, namespace: string, call: CallOptions = {}): Promise<ReleaseMetadata> {
    const r = await this.runOk(`helm get metadata ${name}`, ['get', 'metadata', name, '-n', namespace, '-o', 'json'], call);
    return parseMetadata(parseHelmJson(r.stdout, 'helm get metadata'));
  }

  /** `helm history -o json`, oldest first (`[]` when the release does not exist). */
  async history(name: string, namespace: string, call: CallOptions = {}): Promise<HistoryEntry[]> {
    const r = await this.run(['history', name, '-n', namespace, '-o', 'json', '--max', '256'], call);
    if (r.code !== 0) {
      if (isReleaseNotFound(r.stderr)) return [];
      throw this.error(`helm history ${name}`, r, call.signal);
    }
    return parseHistory(parseHelmJson(r.stdout, 'helm history'));
  }

  /** `helm show chart`: name and exact version the chart reference resolves to. */
  async showChart(ref: ChartRef, call: CallOptions = {}): Promise<ChartMeta> {
    const r = await this.runOk(`helm show chart ${ref.chart}`, ['show', 'chart', ...chartArgs(ref)], call);
    return parseChartYaml(r.stdout);
  }

  /** `helm show crds`: the chart's `crds/` files as multi-document YAML. */
  async showCrds(ref: ChartRef, call: CallOptions = {}): Promise<string> {
    const r = await this.runOk(`helm show crds ${ref.chart}`, ['show', 'crds', ...chartArgs(ref)], call);
    return r.stdout;
  }

  /**
   * `helm template`: the manifests an install/upgrade with these values would apply, rendered
   * against the cluster's capabilities. Returns the multi-document YAML.
   */
  async template(name: string, namespace: string, ref: ChartRef, values: Values, o: { isUpgrade: boolean; skipCrds: boolean; dependencyUpdate: boolean }, call: CallOptions = {}): Promise<string> {
    const args = ['template', name, ...chartArgs(ref), '-n', namespace, ...templateFlags(this.major, o)];
    const r = await this.runWithValues(`helm template ${name}`, args, values, call);
    return r.stdout;
  }

  /**
   * The chart as helm would store it in a release made with `values`: `helm install
   * --dry-run=client -o json` (no cluster is read or written; the chart directory is read as it
   * is, its dependencies are not updated). Its default values are the ones
   * helm computes while loading the chart (sub-chart defaults, `global`, `import-values`,
   * conditions and tags).
   */
  async chartAsStored(name: string, namespace: string, ref: ChartRef, values: Values, call: CallOptions = {}): Promise<StoredChart> {
    const args = ['install', name, ...chartArgs(ref), '-n', namespace, '--dry-run=client', '-o', 'json'];
    const r = await this.runWithValues(`helm install --dry-run=client ${name}`, args, values, call);
    const v = parseHelmJson(r.stdout, 'helm install --dry-run=client');
    return parseStoredChart(isMap(v) ? v.chart : undefined);
  }

  /**
   * The user-supplied values helm stores for a release made with `flags` (`-f FILE`, `--set*`)
   * and then `values` (a private values file, after the flags' files): the `config` of `helm
   * install --dry-run=client -o json` (no cluster is read or written). Helm parses the files (YAML
   * 1.1) and the `--set` syntax itself, so the values compare exactly with a stored release's.
   */
  async suppliedValues(name: string, namespace: string, ref: ChartRef, flags: string[], values: Values, call: CallOptions = {}): Promise<Values> {
    const args = ['install', name, ...chartArgs(ref), '-n', namespace, '--dry-run=client', '-o', 'json', ...flags];
    const r = await this.runWithValues(`helm install --dry-run=client ${name}`, args, values, call);
    const v = parseHelmJson(r.stdout, 'helm install --dry-run=client');
    return isMap(v) && isMap(v.config) ? v.config : {};
  }

  /** `helm upgrade --install … -o json` with exactly `values`; resolves with the new release. */
  async upgradeInstall(name: string, namespace: string, ref: ChartRef, values: Values, o: UpgradeFlagOptions, call: CallOptions = {}): Promise<ReleaseInfo> {
    const args = ['upgrade', name, ...chartArgs(ref), '-n', namespace, ...upgradeFlags(this.major, o), '-o', 'json'];
    const r = await this.runWithValues(`helm upgrade ${name}`, args, values, call, true);
    const json = parseHelmJson(r.stdout, 'helm upgrade');
    // what helm prints without `-o json` (kubernetes.core registers it as `stdout`)
    if (this.lastWrite) this.lastWrite.stdout = this.mask(releaseSummaryText(json, this.major));
    return parseReleaseInfo(json);
  }

  /** `helm rollback NAME REVISION` (`forceConflicts`: helm 4 `--force-conflicts`, for a server-side applied release). */
  async rollback(name: string, namespace: string, revision: number, o: { wait: boolean; timeout?: number; forceConflicts?: boolean }, call: CallOptions = {}): Promise<void> {
    const force = o.forceConflicts === true && this.major >= 4 ? ['--force-conflicts'] : [];
    await this.runOk(`helm rollback ${name} ${revision}`, ['rollback', name, String(revision), '-n', namespace, ...waitFlags(this.major, o.wait, o.timeout), ...force], call, true);
  }

  /** `helm uninstall` (`--keep-history`, `--no-hooks` when asked); resolves false when the release did not exist. */
  async uninstall(name: string, namespace: string, o: { wait: boolean; timeout?: number; keepHistory?: boolean; noHooks?: boolean }, call: CallOptions = {}): Promise<boolean> {
    const flags = [...(o.keepHistory ? ['--keep-history'] : []), ...(o.noHooks ? ['--no-hooks'] : [])];
    const r = await this.run(['uninstall', name, '-n', namespace, ...waitFlags(this.major, o.wait, o.timeout), ...flags], call, true);
    if (r.code !== 0) {
      if (isReleaseNotFound(r.stderr)) return false;
      throw this.error(`helm uninstall ${name}`, r, call.signal);
    }
    return true;
  }
}

const MAX_OUTPUT = 64 * 1024 * 1024;

/** A word of a command line as a shell needs it (quoted when it has spaces or shell characters). */
export function shellWord(w: string): string {
  return /^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** A time as Go's `time.ANSIC` layout prints it in local time (`Thu Nov 26 12:45:02 2026`), as helm's `LAST DEPLOYED`. */
export function ansicTime(rfc3339: string): string {
  const d = new Date(rfc3339);
  if (Number.isNaN(d.getTime())) return rfc3339;
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${DAYS[d.getDay()] ?? ''} ${MONTHS[d.getMonth()] ?? ''} ${String(d.getDate()).padStart(2, ' ')} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())} ${d.getFullYear()}`;
}

/**
 * What `helm upgrade --install` prints without `-o json`, from its JSON release: the first line
 * (`Release "x" has been upgraded. Happy Helming!`, or `… does not exist. Installing it now.` for
 * revision 1), NAME, LAST DEPLOYED, NAMESPACE, STATUS, REVISION, DESCRIPTION (helm 4), TEST SUITE
 * and NOTES.
 */
export function releaseSummaryText(v: unknown, major: number): string {
  const r = isMap(v) ? v : {};
  const info = isMap(r.info) ? r.info : {};
  const s = (x: unknown): string => (typeof x === 'string' ? x : typeof x === 'number' ? String(x) : '');
  const name = s(r.name);
  const revision = s(r.version);
  const out = [
    revision === '1' ? `Release "${name}" does not exist. Installing it now.` : `Release "${name}" has been upgraded. Happy Helming!`,
    `NAME: ${name}`,
    `LAST DEPLOYED: ${ansicTime(s(info.last_deployed))}`,
    `NAMESPACE: ${s(r.namespace)}`,
    `STATUS: ${s(info.status)}`,
    `REVISION: ${revision}`,
    ...(major >= 4 ? [`DESCRIPTION: ${s(info.description)}`] : []),
    'TEST SUITE: None',
  ];
  const notes = s(info.notes);
  if (notes.trim()) out.push('NOTES:', notes.replace(/\n$/, ''));
  return `${out.join('\n')}\n`;
}

/** Why `binary` cannot be run (not found, not executable), or undefined. */
function binaryProblem(binary: string, env: NodeJS.ProcessEnv): string | undefined {
  const found = resolveBinary(binary, env);
  if (!found) return helmNotFoundMessage(binary);
  try {
    accessSync(found, constants.X_OK);
  } catch {
    return `${binary} is not executable; ${helmNotFoundMessage(binary)}`;
  }
  return undefined;
}

/**
 * Spawn a program and collect its output. On `signal` abort: SIGTERM, then wait for exit
 * (SIGKILL only after `termGraceMs`). A program that cannot start resolves as a HelmError throw.
 */
async function runHelm(binary: string, args: string[], opts: Pick<HelmCliOptions, 'env' | 'termGraceMs'>, signal?: AbortSignal, input?: string): Promise<HelmRun> {
  const what = `${path.basename(binary)} ${args[0] ?? ''}`.trim();
  if (signal?.aborted) throw new HelmError(`helm ${args[0] ?? ''}`.trim(), 'interrupted before it started', null, null, true);
  const missing = binaryProblem(binary, opts.env ?? process.env);
  if (missing) throw new HelmError(what, missing, null);
  // Tethered (no orphaned `helm upgrade --wait` if kplay dies); on Ctrl-C helm gets SIGTERM and
  // time to mark the release failed before SIGKILL.
  const r = await runProcess(binary, args, { env: opts.env, signal, termGraceMs: opts.termGraceMs ?? 600_000, maxOutput: MAX_OUTPUT, ...(input !== undefined ? { input } : {}) });
  if (r.error) {
    const e = r.error;
    throw new HelmError(what, e.code === 'ENOENT' ? helmNotFoundMessage(binary) : e.code === 'EACCES' ? `${binary} is not executable; ${helmNotFoundMessage(binary)}` : e.message, null);
  }
  return { stdout: r.stdout, stderr: r.stderr, code: r.code, signal: r.signal };
}
