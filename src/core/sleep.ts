/** The one abortable sleep of kplay. */

/**
 * Wait `ms` milliseconds; resolves `true` after the full wait, `false` at once when `signal`
 * aborts (before or during the wait). Never rejects, so a caller decides what an abort means.
 * @example if (!(await sleep(1000, ctx.signal))) return { status: 'failed', msg: 'interrupted' };
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = (): void => {
      clearTimeout(t);
      resolve(false);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
