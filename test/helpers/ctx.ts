/**
 * A real `ModuleContext` for unit tests of modules: Masker-backed masking, a logger that
 * collects (masked) lines, and Liquid rendering / condition evaluation with the same strict
 * semantics as the engine (undefined variables fail, own properties only).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Liquid } from 'liquidjs';
import { Masker } from '../../src/report/mask.js';
import type { ClusterRef, ModuleContext, ModuleDefinition, ModuleLogger, ModuleResult } from '../../src/sdk/module.js';
import type { Static, TObject, TSchema } from '../../src/sdk/args.js';
import { checkArgs } from '../../src/sdk/check.js';

/** Log lines collected per level (already masked). */
export interface CollectedLogs {
  /** `log.info` lines. */
  info: string[];
  /** `log.debug` lines. */
  debug: string[];
  /** `log.warn` lines. */
  warn: string[];
  /** `log.progress` lines. */
  progress: string[];
}

/** A ModuleContext plus handles tests use to inspect it. */
export interface TestContext extends ModuleContext {
  /** Lines written through `ctx.log`, per level. */
  logs: CollectedLogs;
  /** The Masker behind `mask`/`addSecret`. */
  masker: Masker;
  /** The controller behind `signal`, to simulate Ctrl-C / task timeouts. */
  abort: AbortController;
}

/** Overrides accepted by {@link makeCtx}; anything not given gets a sensible default. */
export type CtxOverrides = Partial<Omit<ModuleContext, 'log' | 'mask' | 'addSecret'>> & {
  /** Use this Masker instead of a fresh one. */
  masker?: Masker;
};

/** The parts of the engine's `Templar` the test context uses. */
interface Engine {
  evalCondition(cond: string, vars: Record<string, unknown>): Promise<boolean>;
  renderString(template: string, vars: Record<string, unknown>): Promise<string>;
  evaluate(expression: string, vars: Record<string, unknown>): Promise<unknown>;
}

const liquid = new Liquid({ strictVariables: true, ownPropertyOnly: true });

/** Liquid truthiness: only `false`, `nil` (null/undefined) are falsy. */
function liquidTruthy(v: unknown): boolean {
  return v !== false && v !== null && v !== undefined;
}

/** Plain liquidjs with the engine's strictness, used when src/template/engine.ts is missing. */
const fallbackEngine: Engine = {
  evalCondition: async (cond, vars) => liquidTruthy(await liquid.evalValue(cond, vars)),
  renderString: (template, vars) => liquid.parseAndRender(template, vars),
  evaluate: (expression, vars) => liquid.evalValue(expression, vars),
};

let enginePromise: Promise<Engine> | undefined;

/**
 * Use the engine's own `templar` (src/template/engine.ts) so tests see exactly the engine's
 * semantics (filters, truthiness, errors); fall back to liquidjs if it is missing or fails to load.
 */
function loadEngine(): Promise<Engine> {
  enginePromise ??= (async () => {
    const enginePath = fileURLToPath(new URL('../../src/template/engine.ts', import.meta.url));
    if (!existsSync(enginePath)) return fallbackEngine;
    try {
      const mod: unknown = await import('../../src/template/engine.js');
      return fromTemplar(mod) ?? fallbackEngine;
    } catch {
      return fallbackEngine;
    }
  })();
  return enginePromise;
}

/** Wrap the module's exported `templar` instance, if it has the methods we need. */
function fromTemplar(mod: unknown): Engine | undefined {
  if (typeof mod !== 'object' || mod === null) return undefined;
  const t: unknown = (mod as Record<string, unknown>).templar;
  if (typeof t !== 'object' || t === null) return undefined;
  const m = t as Record<string, unknown>;
  const { evalCondition, renderString, render } = m;
  if (typeof evalCondition !== 'function' || typeof renderString !== 'function' || typeof render !== 'function') return undefined;
  return {
    evalCondition: async (c, v) => (await evalCondition.call(t, c, v)) === true,
    renderString: async (tpl, v) => String(await renderString.call(t, tpl, v)),
    // A single-expression template keeps its native type in Templar.render.
    evaluate: (expr, v) => Promise.resolve(render.call(t, `{{ ${expr} }}`, v)),
  };
}

/** Build a real ModuleContext for tests. */
export function makeCtx(overrides: CtxOverrides = {}): TestContext {
  const masker = overrides.masker ?? new Masker();
  const logs: CollectedLogs = { info: [], debug: [], warn: [], progress: [] };
  const log: ModuleLogger = {
    info: (m) => void logs.info.push(masker.mask(m)),
    debug: (m) => void logs.debug.push(masker.mask(m)),
    warn: (m) => void logs.warn.push(masker.mask(m)),
    progress: (m) => void logs.progress.push(masker.mask(m)),
  };
  const abort = new AbortController();
  const cluster: ClusterRef = overrides.cluster ?? { name: 'test', context: 'test' };
  const vars = overrides.vars ?? {};
  const adapters = new Map<string, Promise<unknown>>();
  const ctx: TestContext = {
    cluster,
    vars,
    checkMode: overrides.checkMode ?? false,
    diffMode: overrides.diffMode ?? false,
    environment: overrides.environment ?? {},
    signal: overrides.signal ?? abort.signal,
    baseDir: overrides.baseDir ?? process.cwd(),
    findFile: (rel: string) => path.resolve(overrides.baseDir ?? process.cwd(), rel),
    log,
    logs,
    masker,
    abort,
    render:
      overrides.render ?? (async (template, extraVars) => (await loadEngine()).renderString(template, { ...vars, ...(extraVars ?? {}) })),
    evalCondition:
      overrides.evalCondition ?? (async (cond, extraVars) => (await loadEngine()).evalCondition(cond, { ...vars, ...(extraVars ?? {}) })),
    evaluate:
      overrides.evaluate ?? (async (expression, extraVars) => (await loadEngine()).evaluate(expression, { ...vars, ...(extraVars ?? {}) })),
    addSecret: (value) => masker.add(value),
    mask: (text) => masker.mask(text),
    adapter:
      overrides.adapter ??
      (<T>(name: string, create: () => Promise<T>): Promise<T> => {
        let p = adapters.get(name);
        if (!p) {
          p = create();
          adapters.set(name, p);
        }
        return p as Promise<T>;
      }),
  };
  return ctx;
}

/**
 * Run a module as the executor does: the arguments are validated against the module's schema
 * (coerced, defaults filled in) first; invalid arguments throw. Returns what `run` returned.
 */
export async function runModule<S extends TSchema, R extends TObject>(mod: ModuleDefinition<S, R>, args: unknown, ctx: ModuleContext = makeCtx()): Promise<ModuleResult<Static<R>>> {
  const checked = checkArgs(mod, args);
  if (!checked.ok) throw new Error(`invalid args for ${mod.name}: ${checked.errors.join('; ')}`);
  return mod.run(checked.args, ctx);
}
