/** Types of standin.mjs (a per-cluster HTTP stand-in reporting the webapp Deployment's state). */
export interface DeploymentState {
  version: string;
  available: boolean;
  replicas: number;
  ready: number;
  updated: number;
  error?: string;
}
export function deploymentState(dep: unknown): DeploymentState;
export function startStandin(o: { cluster: string; context: string; kubeconfig: string; port: number; namespace?: string; deployment?: string; broken?: boolean }): Promise<{ port: number; close: () => Promise<void>; setBroken: (b: boolean) => void }>;
