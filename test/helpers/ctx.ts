/**
 * A real `ModuleContext` for unit tests of modules: Masker-backed masking, a logger that
 * collects (masked) lines, and rendering / condition evaluation by the engine's own templar
 * (Jinja2 as ansible-core 2.19 evaluates it).
 */
import { templar, type RenderOptions } from '../../src/template/index.js';
import { Masker } from '../../src/core/mask.js';
import type { ClusterRef, ModuleContext, ModuleDefinition, ModuleLogger, ModuleResult } from '../../src/core/module.js';
import type { Static, TObject, TSchema } from '../../src/core/args.js';
import { checkArgs } from '../../src/plugins/check.js';
import { findFile } from '../../src/executor/module-context.js';

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
  renderString(template: string, vars: Record<string, unknown>, opts?: RenderOptions): Promise<string>;
  evaluate(expression: string, vars: Record<string, unknown>): Promise<unknown>;
}

/**
 * The engine's own `templar` (src/template), so tests see exactly the engine's semantics
 * (filters, truthiness, errors). It is imported statically: an engine that fails to load fails
 * the tests that use this helper instead of being replaced by something else.
 */
const engine: Engine = {
  evalCondition: async (cond, vars) => (await templar.evalCondition(cond, vars)) === true,
  renderString: async (template, vars, opts) => String(await templar.renderString(template, vars, opts)),
  // A single-expression template keeps its native type in Templar.render.
  evaluate: (expression, vars) => Promise.resolve(templar.render(`{{ ${expression} }}`, vars)),
};

/** The engine the helper renders with. */
function loadEngine(): Promise<Engine> {
  return Promise.resolve(engine);
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
    // as a task outside a role finds it (ansible-core's search path: the task's directory)
    findFile: (rel, kind) => findFile(rel, kind, vars, { baseDir: overrides.baseDir ?? process.cwd() }),
    log,
    logs,
    masker,
    abort,
    render:
      overrides.render ?? (async (template, extraVars, options) => (await loadEngine()).renderString(template, { ...vars, ...(extraVars ?? {}) }, options?.delimiters ? { delimiters: options.delimiters } : {})),
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
