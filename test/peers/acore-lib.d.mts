/** Types of acore-lib.mjs: ansible-core's integration targets run as ansible-test runs them on the controller. */

/** The repository's root. */
export const repo: string;
/** The reference venv (test/bench/install.sh). */
export const VENV: string;
/** ansible-core's version the targets come from (the reference's). */
export const CORE_VERSION: string;
/** The cache test/peers/install.sh unpacks the peers' sdists into. */
export const SDIST_CACHE: string;
/** The unpacked sdist in the cache. */
export function defaultSrc(): string;
/** Targets copied beside the given one (needs/target/, setup/, hidden roles its meta names), transitively. */
export function dependencies(targetsDir: string, name: string): string[];
/** The setup targets ansible-test runs before the given one. */
export function setupTargets(targetsDir: string, name: string): string[];
/** A bin dir under `dir` whose `ansible-playbook` is the engine; returns its path. */
export function engineBin(engine: 'kplay' | 'ansible', dir: string): string;

/** One target's outcome under one engine. */
export interface TargetResult {
  target: string;
  engine: string;
  /** Exit code of runme.sh / the role's playbook (128 when killed by the timeout). */
  exit: number;
  seconds: number;
  /** stdout and stderr of every step, interleaved. */
  output: string;
  /** The first failure-looking line of the output ('' when none). */
  first: string;
}

/** Run one target (its setup targets first) in a fresh ansible-test-like tree. */
export function runTarget(opts: { src: string; target: string; engine: string; bin: string; timeoutS?: number; verbose?: boolean }): Promise<TargetResult>;

/** `fn` over `items`, `jobs` at a time; results in the items' order. */
export function pool<T, R>(items: T[], jobs: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]>;
