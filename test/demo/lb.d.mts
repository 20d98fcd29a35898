/** Types of lb.mjs (HAProxy in front of the stand-ins, and a client loop through it). */
export function freePort(): Promise<number>;
export function startHaproxy(o: { dir: string; frontendPort: number; adminPort: number; servers: { name: string; port: number }[] }): Promise<{ pid: number | undefined; stop: () => Promise<void> }>;
export interface ClientStats {
  total: number;
  ok: number;
  failed: number;
  failures: string[];
  versions: Record<string, number>;
}
export function clientLoop(port: number, intervalMs?: number): { stop: () => Promise<ClientStats> };
/** A server's admin state in HAProxy, over the runtime API. */
export function serverState(adminPort: number, server: string, backend?: string): Promise<'ready' | 'drain' | 'maint'>;
