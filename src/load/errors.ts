/** Where something came from in a source file (1-based line and column). */
export interface SourcePos {
  file: string;
  line: number;
  col: number;
}

/** `file:line:col` (or just `file` when no position is known). */
export function formatPos(pos: SourcePos | undefined): string {
  if (!pos) return '';
  return pos.line > 0 ? `${pos.file}:${pos.line}:${pos.col}` : pos.file;
}

/**
 * A static error in the user's input (YAML, schema, template, inventory, host pattern, module args).
 * Always detected before any cluster is contacted where possible; maps to exit code 1.
 */
export class InputError extends Error {
  override name = 'InputError';
  constructor(
    message: string,
    readonly pos?: SourcePos,
    /** What the user can do next. */
    readonly hint?: string,
  ) {
    super(message);
  }

  /** The full, user-facing text: `file:line:col: message (hint)`. */
  describe(): string {
    const where = formatPos(this.pos);
    const text = where ? `${where}: ${this.message}` : this.message;
    return this.hint ? `${text}\n  hint: ${this.hint}` : text;
  }
}

/** Coerce anything thrown into a one-line message. */
export function errorMessage(err: unknown): string {
  if (err instanceof InputError) return err.describe();
  if (err instanceof Error) return err.message;
  return String(err);
}
