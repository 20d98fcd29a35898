/** Helm failures: trimming helm's stderr to what matters, masked for secrets. */

/** Most lines of helm's stderr kept in a message. */
export const MAX_ERROR_LINES = 12;
/** Most characters of helm's stderr kept in a message. */
export const MAX_ERROR_CHARS = 2000;

/** Log/noise lines helm prints besides the error (helm 4 slog lines, helm 3 warnings and debug). */
const NOISE = /^(level=\w+ |time="|WARNING: |walk\.go:|[a-z_]+\.go:\d+: \[debug\]|history\.go:|install\.go:|upgrade\.go:|client\.go:)/;

/**
 * The relevant part of helm's stderr: from the first `Error:` line to the end (without log
 * noise), else the last few non-noise lines, else the last lines. Masked with `mask`, capped.
 * @example trimHelmStderr('level=WARN msg="x"\nError: UPGRADE FAILED: boom\n') // 'Error: UPGRADE FAILED: boom'
 */
export function trimHelmStderr(stderr: string, mask: (s: string) => string = (s) => s): string {
  const lines = stderr.split(/\r?\n/).map((l) => l.trimEnd()).filter((l) => l.trim() !== '');
  const first = lines.findIndex((l) => l.startsWith('Error:'));
  let kept: string[];
  if (first >= 0) kept = lines.slice(first).filter((l) => !NOISE.test(l));
  else {
    const clean = lines.filter((l) => !NOISE.test(l));
    kept = (clean.length ? clean : lines).slice(-5);
  }
  if (kept.length > MAX_ERROR_LINES) kept = [...kept.slice(0, MAX_ERROR_LINES), `… (${kept.length - MAX_ERROR_LINES} more lines)`];
  let text = mask(kept.join('\n'));
  if (text.length > MAX_ERROR_CHARS) text = `${text.slice(0, MAX_ERROR_CHARS)}…`;
  return text;
}

/** A helm command that failed (non-zero exit, killed, or could not start). */
export class HelmError extends Error {
  override name = 'HelmError';
  constructor(
    /** What was being done, e.g. `helm upgrade web`. */
    readonly what: string,
    /** Trimmed, masked stderr (or the spawn error). */
    readonly detail: string,
    /** Exit code, when helm ran. */
    readonly exitCode: number | null,
    /** Signal that ended helm, if any. */
    readonly signal: NodeJS.Signals | null = null,
    /** True when kplay stopped helm because the task was interrupted. */
    readonly interrupted = false,
  ) {
    // A program that could not start (or an unsupported version) says it all in `detail`.
    super(exitCode === null && signal === null && !interrupted ? detail : `${what} failed${signal ? ` (signal ${signal})` : ` (exit ${exitCode ?? '?'})`}${detail ? `: ${detail}` : ''}`);
  }
}

/** True when helm said the release does not exist. */
export function isReleaseNotFound(stderr: string): boolean {
  return /release: not found|release not found/i.test(stderr);
}

/** True when helm refused because another operation holds the release. */
export function isOperationInProgress(stderr: string): boolean {
  return /another operation \(install\/upgrade\/rollback\) is in progress/i.test(stderr);
}
