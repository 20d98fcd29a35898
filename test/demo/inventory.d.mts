/** Types of inventory.mjs (the sandbox inventory of the demo and the end-to-end tests). */
export interface SandboxInventoryOptions {
  kubeconfig: string;
  adminPort: number;
  frontendPort: number;
  endpointPorts: Record<string, number>;
  /** Port of the demo's Prometheus; the inventory gets `prometheus_url` when set. */
  prometheusPort?: number;
}
export const DEFAULTS: SandboxInventoryOptions;
/** The inventory YAML text. */
export function sandboxInventory(o?: SandboxInventoryOptions): string;
