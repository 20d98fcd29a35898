/**
 * Kubeconfig `exec` credential plugins (`client.authentication.k8s.io` ExecCredential), run by
 * kplay itself so that a plugin that never answers — an SSO prompt with no terminal, a hung cloud
 * CLI — cannot hang the run: it is killed after a bound (`KPLAY_EXEC_TIMEOUT_SECONDS`, default
 * 30 s) and that cluster fails naming the plugin, while the others go on. Runs as client-go does:
 * the command relative to the kubeconfig's directory when it contains a slash, the plugin's `env`
 * over kplay's, `KUBERNETES_EXEC_INFO` describing a non-interactive call; the answer's token or
 * client certificate is used until its `expirationTimestamp`.
 */
import { setting } from '../core/settings.js';
import path from 'node:path';
import { runProcess } from '../core/process.js';
import { isRecord } from '../core/shape.js';

/** A kubeconfig user's `exec` section (what kplay reads of it). */
export interface ExecConfig {
  command: string;
  args: string[];
  env: { name: string; value: string }[];
  apiVersion: string;
}

/** What a plugin answered. */
export interface ExecCredential {
  token?: string;
  cert?: Buffer;
  key?: Buffer;
  /** Epoch ms; undefined: valid until the apiserver refuses it. */
  expiresAt?: number;
}

/** The bound on one plugin call, ms. @default 30000 */
export function execTimeoutMs(): number {
  return setting('execTimeoutSeconds') * 1000;
}

/** Read a kubeconfig user's `exec` section; undefined when it is not one kplay can run. */
export function parseExecConfig(v: unknown): ExecConfig | undefined {
  if (!isRecord(v) || typeof v.command !== 'string' || !v.command) return undefined;
  const args = Array.isArray(v.args) ? v.args.filter((a): a is string => typeof a === 'string') : [];
  const env = Array.isArray(v.env) ? v.env.flatMap((e) => (isRecord(e) && typeof e.name === 'string' ? [{ name: e.name, value: typeof e.value === 'string' ? e.value : '' }] : [])) : [];
  return { command: v.command, args, env, apiVersion: typeof v.apiVersion === 'string' ? v.apiVersion : 'client.authentication.k8s.io/v1' };
}

/** Run the plugin once (bounded) and read its ExecCredential. Throws a message naming the plugin. */
export async function runExecPlugin(exec: ExecConfig, kubeconfigDir: string, timeoutMs = execTimeoutMs()): Promise<ExecCredential> {
  const program = exec.command.includes('/') ? path.resolve(kubeconfigDir, exec.command) : exec.command;
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const e of exec.env) env[e.name] = e.value;
  env.KUBERNETES_EXEC_INFO = JSON.stringify({ apiVersion: exec.apiVersion, kind: 'ExecCredential', spec: { interactive: false } });
  const what = `credential plugin "${exec.command}"`;
  const signal = AbortSignal.timeout(timeoutMs);
  const r = await runProcess(program, exec.args, { env, signal });
  if (signal.aborted) throw new Error(`${what} did not answer within ${Math.round(timeoutMs / 1000)} s and was killed (KPLAY_EXEC_TIMEOUT_SECONDS sets the bound; does it wait for a login prompt?)`);
  if (r.error) throw new Error(`${what} could not be started: ${r.error.message}`);
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code ?? r.signal ?? '?'})${r.stderr.trim() ? `: ${r.stderr.trim().split('\n').slice(-3).join(' ')}` : ''}`);
  let doc: unknown;
  try {
    doc = JSON.parse(r.stdout);
  } catch {
    throw new Error(`${what} did not print an ExecCredential (its output is not JSON)`);
  }
  const status = isRecord(doc) && isRecord(doc.status) ? doc.status : undefined;
  if (!status) throw new Error(`${what} printed no ExecCredential status`);
  const out: ExecCredential = {};
  if (typeof status.token === 'string' && status.token) out.token = status.token;
  if (typeof status.clientCertificateData === 'string' && typeof status.clientKeyData === 'string') {
    out.cert = Buffer.from(status.clientCertificateData);
    out.key = Buffer.from(status.clientKeyData);
  }
  if (!out.token && !out.cert) throw new Error(`${what} gave neither a token nor a client certificate`);
  if (typeof status.expirationTimestamp === 'string') {
    const t = Date.parse(status.expirationTimestamp);
    if (Number.isFinite(t)) out.expiresAt = t;
  }
  return out;
}
