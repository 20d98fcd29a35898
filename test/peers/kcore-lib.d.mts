/** The result of one target's runme.sh under one engine. */
export interface TargetResult {
  engine: 'kplay' | 'ansible';
  target: string;
  /** runme.sh's exit status (137 when killed at the timeout) */
  exit: number;
  seconds: number;
  /** the file holding the whole output */
  log: string;
  /** the first line that looks like a failure ('' when none) */
  first: string;
  /** the whole output */
  text: string;
}
export interface Workspace {
  engine: 'kplay' | 'ansible';
  root: string;
  bin: string;
  inventory: string;
}
export const repo: string;
export const VENV: string;
export const DEFAULT_SRC: string;
export function targetsDir(src?: string): string;
export function defaultTargets(dir: string): string[];
export function workspace(engine: 'kplay' | 'ansible', dir: string): Workspace;
export function runTarget(ws: Workspace, target: string, o: { kubeconfig: string; context: string; logs: string; timeoutSeconds?: number }): Promise<TargetResult>;
export function settle(o: { kubectl: string; kubeconfig: string; context: string; timeoutSeconds?: number }): Promise<string>;
