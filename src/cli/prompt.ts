/**
 * `vars_prompt` on a terminal, as ansible-playbook asks: `prompt [default]: `, the answer read
 * from stdin up to the end of the line; a private answer is not echoed.
 */
import type { Readable, Writable } from 'node:stream';
import type { VarPrompt } from '../playbook/types.js';

/** A terminal: the input (raw mode switched for private answers when it is a TTY) and where the question goes. */
export interface Terminal {
  input: Readable & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
  output: Writable;
}

/** The question as Ansible prints it: `prompt [default]: ` (the default shown when there is one). */
export function question(p: VarPrompt): string {
  const shown = p.default !== undefined && p.default !== null && typeof p.default !== 'object' ? ` [${String(p.default)}]` : '';
  return `${p.prompt}${shown}: `;
}

/** Ask one question on `term`; resolves with the line typed (without its end of line). */
export function askOn(term: Terminal, p: VarPrompt): Promise<string> {
  const { input, output } = term;
  output.write(question(p));
  const raw = p.private && input.isTTY === true && typeof input.setRawMode === 'function';
  if (raw) input.setRawMode?.(true);
  return new Promise((resolve, reject) => {
    let line = '';
    const done = (err?: Error): void => {
      input.off('data', onData);
      input.off('end', onEnd);
      input.off('error', onError);
      if (raw) input.setRawMode?.(false);
      input.pause();
      if (p.private) output.write('\n');
      if (err) reject(err);
      else resolve(line);
    };
    const onData = (chunk: Buffer | string): void => {
      for (const ch of chunk.toString()) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003') return done(new Error(`vars_prompt '${p.name}': interrupted`));
        if (ch === '\u007f' || ch === '\b') line = line.slice(0, -1);
        else line += ch;
      }
    };
    const onEnd = (): void => done();
    const onError = (e: Error): void => done(e);
    input.on('data', onData);
    input.on('end', onEnd);
    input.on('error', onError);
    input.resume();
  });
}

/** The `ask` of a run: prompts on the process's terminal, or undefined when stdin or stderr is not one (the defaults stay). */
export function terminalAsk(): ((p: VarPrompt) => Promise<string>) | undefined {
  if (process.stdin.isTTY !== true || process.stderr.isTTY !== true) return undefined;
  return (p) => askOn({ input: process.stdin, output: process.stderr }, p);
}
