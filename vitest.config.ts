import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Two projects: `unit` needs nothing but Node; `integration` runs against the real
// sandbox clusters (kube-apiserver + controllers + kwok) started by the global setup.
// Every module run under test has its returned data checked against the module's declared
// `result` schema (kplay CLIs spawned by tests inherit this).
process.env.KPLAY_CHECK_RESULTS ??= '1';

export default defineConfig({
  // modules import the public SDK by its package name; tests run them from source
  resolve: { alias: { 'kplay/sdk': fileURLToPath(new URL('./src/sdk/index.ts', import.meta.url)) } },
  test: {
    projects: [
      {
        // inherit the root config (the `kplay/sdk` alias: modules and examples use the SDK sources)
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
          // a bound, not a wait: npm test runs this project beside the integration lanes
          // (test/lanes.mjs), so a CPU-bound test (password_hash's 656,000 rounds, compiling every
          // module's schemas) gets a share of the cores only
          testTimeout: 90_000,
        },
      },
      {
        extends: true,
        test: {
          // ansible-playbook vs kplay on the same playbooks (needs the venv of test/bench/install.sh)
          name: 'parity',
          include: ['test/parity/**/*.test.ts'],
          // a bound, not a wait: each case runs ansible-playbook and kplay, and beside the other
          // lanes (test/lanes.mjs) on a loaded 2-core machine a case of local modules (a Python
          // process per task under ansible-playbook) took over 60 s
          testTimeout: 240_000,
        },
      },
      {
        extends: true,
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
