/**
 * A real `ModuleContext` for unit tests of modules: Masker-backed masking, a logger that
 * collects (masked) lines, and Liquid rendering / condition evaluation with the same strict
 * semantics as the engine (undefined variables fail, own properties only).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Liquid } from 'liquidjs';
import { Masker } from '../../src/report/mask.js';
import type { ClusterRef, ModuleContext, ModuleLogger } from '../../src/sdk/module.js';

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

/** Signature of the condition evaluator (the engine's `Templar.evalCondition`, or the fallback). */
type EvalCondition = (cond: string, vars: Record<string, unknown>) => Promise<boolean>;

const liquid = new Liquid({ strictVariables: true, ownPropertyOnly: true });

/** Liquid truthiness: only `false`, `nil` (null/undefined) are falsy. */
function liquidTruthy(v: unknown): boolean {
  return v !== false && v !== null && v !== undefined;
}

const fallbackEval: EvalCondition = async (cond, vars) => liquidTruthy(await liquid.evalValue(cond, vars));

let engineEval: Promise<EvalCondition | undefined> | undefined;

/**
 * Use the engine's own `templar.evalCondition` (src/template/engine.ts) so tests see exactly the
 * engine's semantics; fall back to liquidjs directly if the engine is missing or fails to load.
 */
function loadEngineEval(): Promise<EvalCondition | undefined> {
  engineEval ??= (async () => {
    const enginePath = fileURLToPath(new URL('../../src/template/engine.ts', import.meta.url));
    if (!existsSync(enginePath)) return undefined;
    try {
      const mod: unknown = await import('../../src/template/engine.js');
      return pickEvalCondition(mod);
    } catch {
      return undefined;
    }
  })();
  return engineEval;
}

/** Find `templar.evalCondition(cond, vars)` on the engine module. */
function pickEvalCondition(mod: unknown): EvalCondition | undefined {
  if (typeof mod !== 'object' || mod === null) return undefined;
  const templar: unknown = (mod as Record<string, unknown>).templar;
  if (typeof templar !== 'object' || templar === null) return undefined;
  const ev: unknown = (templar as Record<string, unknown>).evalCondition;
  if (typeof ev !== 'function') return undefined;
  return (c, v) => Promise.resolve(ev.call(templar, c, v)).then((r) => r === true);
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
    signal: overrides.signal ?? abort.signal,
    baseDir: overrides.baseDir ?? process.cwd(),
    log,
    logs,
    masker,
    abort,
    render:
      overrides.render ??
      ((template, extraVars) => liquid.parseAndRender(template, { ...vars, ...(extraVars ?? {}) })),
    evalCondition:
      overrides.evalCondition ??
      (async (cond, extraVars) => {
        const ev = (await loadEngineEval()) ?? fallbackEval;
        return ev(cond, { ...vars, ...(extraVars ?? {}) });
      }),
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
