/** Types of standin.mjs (a per-cluster HTTP stand-in reporting the webapp Deployment's state). */
export interface DeploymentState {
  version: string;
  available: boolean;
  replicas: number;
  ready: number;
  updated: number;
  /** Fraction of requests the release fails (pod template annotation `demo.kplay.dev/error-rate`), 0 for a good release. */
  errorRate: number;
  error?: string;
}
export const ERROR_RATE_ANNOTATION: string;
export function deploymentState(dep: unknown): DeploymentState;
export function startStandin(o: {
  cluster: string;
  context: string;
  kubeconfig: string;
  port: number;
  namespace?: string;
  deployment?: string;
  broken?: boolean;
  /** In-cluster requests per second the stand-in serves besides the ones through HAProxy (default 10, 0: none). */
  inClusterRps?: number;
}): Promise<{ port: number; close: () => Promise<void>; setBroken: (b: boolean) => void; counters: () => { requests: number; errors: number } }>;
