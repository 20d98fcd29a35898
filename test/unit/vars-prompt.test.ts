// vars_prompt on a terminal: the question as ansible-playbook prints it, the answer read up to the
// end of the line, a private answer not echoed (raw mode on a TTY, back off after).
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { askOn, question } from '../../src/cli/prompt.js';
import type { VarPrompt } from '../../src/playbook/types.js';

const p = (over: Partial<VarPrompt> = {}): VarPrompt => ({ name: 'ns', prompt: 'Namespace', private: false, confirm: false, ...over });

function terminal(isTTY: boolean): { input: PassThrough & { isTTY?: boolean; setRawMode?: (m: boolean) => unknown }; output: PassThrough; out: () => string; modes: boolean[] } {
  const input: PassThrough & { isTTY?: boolean; setRawMode?: (m: boolean) => unknown } = new PassThrough();
  const modes: boolean[] = [];
  input.isTTY = isTTY;
  input.setRawMode = (m: boolean) => modes.push(m);
  const output = new PassThrough();
  let text = '';
  output.on('data', (d: Buffer) => (text += d.toString()));
  return { input, output, out: () => text, modes };
}

describe('vars_prompt questions', () => {
  it('shows the default in brackets, as Ansible', () => {
    expect(question(p({ default: 'rw-a' }))).toBe('Namespace [rw-a]: ');
    expect(question(p())).toBe('Namespace: ');
  });

  it('reads one line; a public prompt is not switched to raw mode', async () => {
    const t = terminal(true);
    const answer = askOn(t, p());
    t.input.write('rw-team\nrest');
    await expect(answer).resolves.toBe('rw-team');
    expect(t.out()).toBe('Namespace: ');
    expect(t.modes).toEqual([]);
  });

  it('a private answer is read in raw mode (no echo), backspace edits, raw mode is left after', async () => {
    const t = terminal(true);
    const answer = askOn(t, p({ name: 'token', prompt: 'Token', private: true }));
    t.input.write('s3cx\u007fret\r');
    await expect(answer).resolves.toBe('s3cret');
    expect(t.out()).toBe('Token: \n');
    expect(t.modes).toEqual([true, false]);
  });

  it('Ctrl-C interrupts with a clear error', async () => {
    const t = terminal(true);
    const answer = askOn(t, p({ private: true }));
    t.input.write('\u0003');
    await expect(answer).rejects.toThrow("vars_prompt 'ns': interrupted");
  });
});
