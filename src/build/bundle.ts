/**
 * Build step (`npm run build`, after `tsc` and the precompiled schemas): bundle the CLI, the SDK
 * and the built-in modules with esbuild so a `kplay` run loads a handful of files instead of ~150
 * (loading them was ~0.25 s of every command, `kplay --help` included).
 *
 * The bundles overwrite tsc's output at the same paths — `dist/src/cli/main.js` (the `kplay`
 * bin), `dist/src/sdk/index.js` (`kplay/sdk`) and `dist/modules/*.js` — and share their code
 * through chunks in `dist/src/chunks/`, so the CLI, the built-in modules and every community
 * module (whose `kplay/sdk` resolves to `dist/src/sdk/index.js`, see `hookSdk`) use one SDK
 * instance. `dist/src/chunks/` is as deep as `dist/src/<dir>/`, so paths relative to
 * `import.meta.url` written as `../<dir>/…` hold in both layouts.
 *
 * Left outside the bundle, loaded only on the paths that need them: `@kubernetes/client-node`
 * (exec/OIDC credentials), `tsx` (TypeScript community modules), `@sinclair/typebox` (schemas
 * beyond the SDK's own constructors) and the generated `validators.gen.js`. ajv's compiler,
 * liquidjs and jmespath are not in the bundle either: src/load/schema.ts, the `date` and
 * `json_query` filters `require` them on first use (most runs never do).
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

/** Packages loaded at run time from node_modules (see the header). */
export const EXTERNAL = ['@kubernetes/client-node', 'tsx', 'tsx/*', '@sinclair/typebox'];

/** Bundle the CLI, the SDK and the built-in modules of the repository at `root` into `root/dist`. */
export async function bundle(root: string): Promise<void> {
  const modules = readdirSync(path.join(root, 'modules'))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => path.join(root, 'modules', f));
  rmSync(path.join(root, 'dist/src/chunks'), { recursive: true, force: true });
  await build({
    absWorkingDir: root,
    entryPoints: [path.join(root, 'src/cli/main.ts'), path.join(root, 'src/sdk/index.ts'), ...modules],
    outbase: root,
    outdir: path.join(root, 'dist'),
    entryNames: '[dir]/[name]',
    chunkNames: 'src/chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    tsconfig: path.join(root, 'tsconfig.json'),
    external: EXTERNAL,
    sourcemap: true,
    logLevel: 'warning',
    // A new id per build: the parse cache (src/load/parse-cache.ts) never reads another build's entries.
    define: { KPLAY_BUILD_ID: JSON.stringify(randomUUID()) },
    // CommonJS dependencies (ajv, js-yaml, …) call `require` for Node built-ins: give the ES module one.
    banner: { js: "import { createRequire as __kplayCreateRequire } from 'node:module'; const require = __kplayCreateRequire(import.meta.url);" },
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  await bundle(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..'));
}
