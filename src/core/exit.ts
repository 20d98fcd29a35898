/**
 * The one table of kplay's exit codes, the contract scripts and CI rely on: each code's name, number
 * and meaning. Every command returns an {@link ExitCode}; the README's "Exit codes" table is
 * generated from {@link EXIT_CODES} (`npm run schemas`). The numbers never change.
 */

/** Every exit code: its number and what it means (the README's wording). The order is the README's. */
export const EXIT_CODES = {
  ok: { code: 0, meaning: 'every cluster succeeded (ignored failures included)' },
  usage: { code: 1, meaning: 'usage or validation error: bad flag, YAML/schema/template error, unknown module, bad host pattern, missing file, bad environment variable — nothing was run' },
  failed: { code: 2, meaning: 'a task failed on at least one cluster (or the run was stopped by `max_fail_percentage` / `any_errors_fatal`)' },
  drift: {
    code: 3,
    meaning:
      "(`kplay drift`) drift found (fields another field manager took from kplay, `--force-conflicts`, included); (`kplay history verify`) a run record was edited, removed, inserted or reordered; (`kplay report`) the report is written, but the run's own record does not verify; (`kplay fleet status`) shards are still running or missing",
  },
  unreachable: { code: 4, meaning: 'a cluster was unreachable (and no task failed)' },
  refused: { code: 5, meaning: '(`kplay run --plan`) refused: the plan no longer holds (inputs or live state moved), was modified, or an approved plan is required' },
  crashed: {
    code: 6,
    meaning:
      '(`kplay run`, `kplay drift --repair`) kplay stopped on an unexpected error (a bug) after tasks had run for real: clusters may have been changed — see the run record (`kplay history`), carry on with `kplay run --resume last`, and report the error. The same error before any task ran exits 1',
  },
  interrupted: { code: 130, meaning: 'interrupted (Ctrl-C / SIGTERM)' },
} as const;

/** The name of an exit code. */
export type ExitName = keyof typeof EXIT_CODES;

/** The number of each exit code by name: `EXIT.failed` is 2. */
export const EXIT: { readonly [K in ExitName]: (typeof EXIT_CODES)[K]['code'] } = {
  ok: EXIT_CODES.ok.code,
  usage: EXIT_CODES.usage.code,
  failed: EXIT_CODES.failed.code,
  drift: EXIT_CODES.drift.code,
  unreachable: EXIT_CODES.unreachable.code,
  refused: EXIT_CODES.refused.code,
  crashed: EXIT_CODES.crashed.code,
  interrupted: EXIT_CODES.interrupted.code,
};

/** An exit code of kplay: 0, 1, 2, 3, 4, 5, 6 or 130. */
export type ExitCode = (typeof EXIT)[ExitName];
