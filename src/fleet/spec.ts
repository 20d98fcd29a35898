/**
 * Which shard this process is, and of which fleet run: from the flags of `kplay run`, else from the
 * environment an Indexed Job pod gets (see contract.ts, FLEET_ENV). Flags win over the environment.
 */
import { existsSync, readFileSync } from 'node:fs';
import { setting } from '../core/settings.js';
import type { Env } from '../core/setting-spec.js';
import { InputError } from '../load/errors.js';
import { DEFAULT_FLEET_NAMESPACE, FLEET_ENV, FLEET_RUN_ID_PATTERN, POD_NAMESPACE_FILE } from './contract.js';

/** A shard of a fleet run. */
export interface ShardSpec {
  /** 0-based. */
  index: number;
  shards: number;
  /** The fleet run id; undefined: a shard without a shared budget (no management cluster). */
  fleetRun?: string;
  namespace: string;
  /** The management cluster: kubeconfig context ('' = current / in-cluster) and file. */
  context: string;
  kubeconfig?: string;
}

/** The flags of `kplay run` that make it a shard. */
export interface ShardFlags {
  shard?: string;
  shards?: string;
  fleetRun?: string;
  fleetNamespace?: string;
  fleetContext?: string;
  fleetKubeconfig?: string;
}

const SHARD_HINT = 'give --shard I/N (0 <= I < N), or KPLAY_SHARD=I/N, or JOB_COMPLETION_INDEX with --shards N (or KPLAY_SHARDS)';

function count(value: string, what: string): number {
  const s = value.trim();
  if (!/^\d+$/.test(s)) throw new InputError(`${what} must be a whole number, got '${value}'`, undefined, SHARD_HINT);
  return Number(s);
}

/** Parse `I/N`. */
export function parseShard(value: string, what = '--shard'): { index: number; shards: number } {
  const m = /^\s*([^/]*)\/([^/]*)\s*$/.exec(value);
  if (!m) throw new InputError(`${what} must be I/N (shard I of N, 0-based), got '${value}'`, undefined, SHARD_HINT);
  return check(count(m[1] ?? '', `${what} index`), count(m[2] ?? '', `${what} count`), what);
}

function check(index: number, shards: number, what: string): { index: number; shards: number } {
  if (shards < 1) throw new InputError(`${what}: the number of shards must be at least 1, got ${shards}`, undefined, SHARD_HINT);
  if (index >= shards) throw new InputError(`${what}: shard index ${index} is not below the number of shards ${shards} (indexes are 0-based, as JOB_COMPLETION_INDEX)`, undefined, SHARD_HINT);
  return { index, shards };
}

/**
 * The shard spec from flags and environment, or undefined when this run is not a shard (no
 * `--shard`, `KPLAY_SHARD` or `JOB_COMPLETION_INDEX`). `JOB_COMPLETION_INDEX` alone (without N) is
 * not a shard: an Indexed Job's pod that runs kplay unsharded.
 */
export function shardSpec(flags: ShardFlags, env: Env = process.env, podNamespaceFile = POD_NAMESPACE_FILE): ShardSpec | undefined {
  let where: { index: number; shards: number } | undefined;
  const nFlag = flags.shards ?? setting('shards', env);
  if (flags.shard !== undefined) {
    where = parseShard(flags.shard);
    if (flags.shards !== undefined && count(flags.shards, '--shards') !== where.shards) throw new InputError(`--shard ${flags.shard} and --shards ${flags.shards} disagree`, undefined, 'give one of them');
  } else if (setting('shard', env)) {
    where = parseShard(setting('shard', env) ?? '', FLEET_ENV.shard);
  } else if (setting('jobCompletionIndex', env) !== undefined && nFlag !== undefined) {
    where = check(count(setting('jobCompletionIndex', env) ?? '', FLEET_ENV.completionIndex), count(nFlag, flags.shards !== undefined ? '--shards' : FLEET_ENV.shards), FLEET_ENV.completionIndex);
  } else if (flags.shards !== undefined) {
    throw new InputError('--shards N needs the shard index: JOB_COMPLETION_INDEX is not set', undefined, SHARD_HINT);
  }
  const fleetRun = flags.fleetRun ?? setting('fleetRun', env);
  if (!where) {
    if (flags.fleetRun !== undefined) throw new InputError('--fleet-run needs a shard', undefined, SHARD_HINT);
    return undefined;
  }
  if (fleetRun !== undefined && !FLEET_RUN_ID_PATTERN.test(fleetRun)) {
    throw new InputError(`fleet run id '${fleetRun}' is not valid`, undefined, 'use 1-50 lowercase letters, digits and dashes, starting and ending with a letter or digit (it names a ConfigMap)');
  }
  const podNs = existsSync(podNamespaceFile) ? readFileSync(podNamespaceFile, 'utf8').trim() : '';
  return {
    ...where,
    ...(fleetRun ? { fleetRun } : {}),
    namespace: flags.fleetNamespace ?? setting('fleetNamespace', env) ?? (podNs || DEFAULT_FLEET_NAMESPACE),
    context: flags.fleetContext ?? setting('fleetContext', env) ?? '',
    ...((flags.fleetKubeconfig ?? setting('fleetKubeconfig', env)) ? { kubeconfig: flags.fleetKubeconfig ?? setting('fleetKubeconfig', env) } : {}),
  };
}

/** A shard as the journal of a run records it. */
export interface JournalShard {
  index: number;
  shards: number;
  fleet_run?: string;
  namespace: string;
  context: string;
  kubeconfig?: string;
}

/**
 * Resuming: the shard of the interrupted run (from its journal). Flags or environment naming
 * another shard or fleet run are refused; naming none, the journal's shard is taken.
 */
export function resumeShard(recorded: JournalShard | undefined, runId: string, flags: ShardFlags, env: Env = process.env): ShardSpec | undefined {
  const now = shardSpec(flags, env);
  if (!recorded) {
    if (now) throw new InputError(`run ${runId} was not a shard: it cannot be resumed as shard ${now.index}/${now.shards}`, undefined, 'resume it without --shard (and without KPLAY_SHARD / JOB_COMPLETION_INDEX)');
    return undefined;
  }
  if (now && (now.index !== recorded.index || now.shards !== recorded.shards || (now.fleetRun ?? '') !== (recorded.fleet_run ?? ''))) {
    throw new InputError(
      `run ${runId} was shard ${recorded.index}/${recorded.shards}${recorded.fleet_run ? ` of fleet run ${recorded.fleet_run}` : ''}; this resume names shard ${now.index}/${now.shards}${now.fleetRun ? ` of fleet run ${now.fleetRun}` : ''}`,
      undefined,
      'a shard resumes as the same shard of the same fleet run: give the same --shard/--fleet-run, or none (the journal\'s are taken)',
    );
  }
  return now ?? { index: recorded.index, shards: recorded.shards, ...(recorded.fleet_run ? { fleetRun: recorded.fleet_run } : {}), namespace: recorded.namespace, context: recorded.context, ...(recorded.kubeconfig ? { kubeconfig: recorded.kubeconfig } : {}) };
}
