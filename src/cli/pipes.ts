/**
 * A reader going away — `kplay run … | head -1`, a pager closed early, an SSH session dropped
 * while piping to a log, a terminal that hangs up — must never abort cluster work. Once stdout
 * (or stderr) reports EPIPE (or EIO, a terminal gone),
 * further writes to it are dropped; the run goes on, writes its run records, releases its locks
 * and exits with the code it would have had. Read-only commands simply finish quietly.
 */
import type { Writable } from 'node:stream';

/** Streams whose reader went away. */
const gone = new WeakSet<Writable>();

/** True once `stream`'s reader has gone away. */
export function readerGone(stream: Writable): boolean {
  return gone.has(stream);
}

function silence(stream: Writable & { write: Writable['write'] }): void {
  if (gone.has(stream)) return;
  gone.add(stream);
  const drop = ((..._args: unknown[]): boolean => {
    const cb = _args.find((a): a is () => void => typeof a === 'function');
    if (cb) queueMicrotask(cb);
    return true;
  }) as Writable['write'];
  stream.write = drop;
}

/** Install the guard on process.stdout and process.stderr (once, at start-up). */
export function guardPipes(streams: (NodeJS.WriteStream & { write: Writable['write'] })[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      // EIO: the terminal itself is gone (a hangup): like a reader that went away
      if (e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED' || e.code === 'ECONNRESET' || e.code === 'EIO') {
        silence(stream);
        return;
      }
      throw e;
    });
  }
}
