/** Types of prometheus.mjs (the demo's Prometheus scraping the stand-in ingresses). */
export function startPrometheus(o: { dir: string; port: number; targets: Record<string, string> }): Promise<{ url: string; pid: number | undefined; stop: () => Promise<void> }>;
export function waitForQuery(url: string, query: string, ok: (values: number[]) => boolean, timeoutMs?: number): Promise<void>;
