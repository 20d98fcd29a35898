import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Two projects: `unit` needs nothing but Node; `integration` runs against the real
// sandbox clusters (kube-apiserver + controllers + kwok) started by the global setup.
export default defineConfig({
  // modules import the public SDK by its package name; tests run them from source
  resolve: { alias: { 'kplay/sdk': fileURLToPath(new URL('./src/sdk/index.ts', import.meta.url)) } },
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          // ansible-playbook vs kplay on the same playbooks (needs the venv of test/bench/install.sh)
          name: 'parity',
          include: ['test/parity/**/*.test.ts'],
          testTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/sandbox/global-setup.ts'],
          testTimeout: 240_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
