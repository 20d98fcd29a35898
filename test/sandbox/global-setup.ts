// vitest globalSetup for the `integration` project: starts the local
// Kubernetes sandbox (3 clusters) before the integration tests and stops it
// afterwards. A sandbox that is already running (or KPLAY_SANDBOX_REUSE=1) is
// reused and left running. If the sandbox cannot start this throws, so the
// integration tests fail rather than silently skip.
import type { TestProject } from 'vitest/node';
import { up, down, status } from './lib.mjs';
import type { SandboxInfo } from './env.js';

const CLUSTERS = 3;

export default async function setup({ provide }: TestProject): Promise<() => Promise<void>> {
  const log = (line: string): void => {
    process.stderr.write(`${line}\n`);
  };
  const reuseRequested = process.env.KPLAY_SANDBOX_REUSE === '1';
  const before = await status();
  const alreadyRunning = before.running;
  if (reuseRequested && !alreadyRunning) {
    log(`KPLAY_SANDBOX_REUSE=1 but no healthy sandbox is running (${before.reason}); starting one`);
  }

  let result;
  try {
    result = await up({ clusters: CLUSTERS, log });
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    throw new Error(`kplay sandbox failed to start (integration tests need it; see test/sandbox/README.md):\n${msg}`);
  }
  if (result.state.clusters.length < CLUSTERS) {
    throw new Error(`kplay sandbox has ${result.state.clusters.length} clusters, integration tests need ${CLUSTERS}`);
  }

  const info: SandboxInfo = {
    kubeconfig: result.kubeconfig,
    inventory: result.inventory,
    statePath: result.statePath,
    binDir: result.binDir,
  };
  process.env.KPLAY_SANDBOX_KUBECONFIG = info.kubeconfig;
  process.env.KPLAY_SANDBOX_INVENTORY = info.inventory;
  process.env.KPLAY_SANDBOX_STATE = info.statePath;
  process.env.KPLAY_SANDBOX_BIN = info.binDir;
  provide('sandbox', info);

  // keep a sandbox we did not start (or that the user asked to reuse)
  const keep = alreadyRunning || reuseRequested || result.reused;
  return async () => {
    if (keep) {
      log('kplay sandbox: left running (reused)');
      return;
    }
    await down({ log });
  };
}
