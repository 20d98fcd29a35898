// Type declarations for lib.mjs (plain JS so that it runs without a build step).

export declare const K8S_VERSION: string;
export declare const CONFIG_VERSION: number;
export declare const OUTDATED: string;

export interface SandboxProcess {
  name: string;
  bin: string;
  pid: number;
  log: string;
}

export interface SandboxCluster {
  name: string;
  /** admin context in the sandbox kubeconfig (same as name) */
  context: string;
  /** context of the unprivileged user CN=dev-user (no groups) */
  devContext: string;
  server: string;
  port: number;
  serviceCIDR: string;
  nodeName: string;
  auditLog: string;
  pkiDir: string;
  kcmPort: number;
  schedPort: number;
  kwokPort: number;
  processes: Record<'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler' | 'kwok', SandboxProcess>;
}

export interface SandboxState {
  version: number;
  configVersion?: number;
  kubernetesVersion: string;
  createdAt: string;
  runDir: string;
  binDir: string;
  kubeconfig: string;
  inventory: string;
  pids: number[];
  etcd: { endpoint: string; dataDir: string; process: SandboxProcess };
  clusters: SandboxCluster[];
  coldStartMs: number | null;
}

export interface UpResult {
  reused: boolean;
  state: SandboxState;
  kubeconfig: string;
  inventory: string;
  statePath: string;
  binDir: string;
  clusters: string[];
}

export interface ClusterHealth {
  name: string;
  server: string;
  healthy: boolean;
  readyz: string;
  deadProcesses: string[];
  rssMiB: number;
}

export interface StatusResult {
  running: boolean;
  reason: string;
  /** started by an older test/sandbox (different CONFIG_VERSION) */
  outdated?: boolean;
  state: SandboxState | null;
  etcd?: { endpoint: string; alive: boolean; rssMiB: number };
  clusters: ClusterHealth[];
}

type Log = (line: string) => void;

export declare function cacheDir(): string;
export declare function binDir(): string;
export declare function runDir(): string;
export declare function statePath(): string;
export declare function readState(): SandboxState | null;
export declare function isOurProcess(proc: SandboxProcess): boolean;
export declare function rssKiB(pid: number): number;
export declare function memoryReport(state: SandboxState): { lines: string[]; totalMiB: number };
export declare function status(): Promise<StatusResult>;
export declare function up(opts?: { clusters?: number; log?: Log }): Promise<UpResult>;
export declare function down(opts?: { log?: Log }): Promise<{ stopped: number }>;
