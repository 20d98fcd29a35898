/**
 * What ansible.builtin.command and ansible.builtin.shell do (one module in Ansible too): free-form
 * options, `creates`/`removes` globs, `chdir`, `stdin`, check mode, and the result with
 * `cmd`/`rc`/`stdout`/`stderr`/`*_lines`/`start`/`end`/`delta`/`msg`.
 */
import { existsSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import path from 'node:path';
import type { ModuleContext, ModuleResult } from '../core/module.js';
import { runProcess } from '../core/process.js';
import { Type } from '../core/args.js';
import { parseFreeForm, shlexSplit } from './kv.js';
import { expandUserVars, globExists, localPath } from './paths.js';
import { delta, pyNow, splitLines } from './time.js';

const MAX_OUTPUT = 16 * 1024 * 1024;

/** The arguments `command`/`shell` share (after defaults). */
export interface CommandArgs {
  _raw_params?: string;
  cmd?: string;
  argv?: string[];
  chdir?: string;
  executable?: string;
  creates?: string;
  removes?: string;
  stdin?: string;
  stdin_add_newline: boolean;
  strip_empty_ends: boolean;
  expand_argument_vars?: boolean;
  env: Record<string, string>;
  ok_codes: number[];
}

/** The registered result of `command`/`shell`. */
export interface CommandData {
  [key: string]: unknown;
  cmd: string | string[] | null;
  rc: number | null;
  stdout: string;
  stderr: string;
  stdout_lines: string[];
  stderr_lines: string[];
  start: string | null;
  end: string | null;
  delta: string | null;
}

/** The environment a task adds (`environment:` keyword), when the engine provides it. */
function taskEnvironment(ctx: ModuleContext): Record<string, string> {
  const env = (ctx as ModuleContext & { environment?: Record<string, string> }).environment;
  return env && typeof env === 'object' ? env : {};
}

const BOOL_TRUE = /^(y|yes|on|1|true|t)$/i;
const BOOL_FALSE = /^(n|no|off|0|false|f)$/i;

/** Free-form options merged under the explicit ones (free-form `key=value` strings are booleans where the option is). */
function merged(args: CommandArgs): { args: CommandArgs; error?: string } {
  if (args._raw_params === undefined) return { args };
  const ff = parseFreeForm(args._raw_params);
  const out: CommandArgs = { ...args, _raw_params: ff.raw };
  for (const [k, v] of Object.entries(ff.options)) {
    if (k === 'warn') return { args, error: "Unsupported parameters for (command) module: warn" };
    if (k === 'stdin_add_newline' || k === 'strip_empty_ends') {
      if (!BOOL_TRUE.test(v) && !BOOL_FALSE.test(v)) return { args, error: `argument '${k}' is of type str and we were unable to convert to bool: The value '${v}' is not a valid boolean.` };
      out[k] = BOOL_TRUE.test(v);
    } else if (k === 'creates' || k === 'removes' || k === 'chdir' || k === 'executable' || k === 'stdin') out[k] = v;
  }
  return { args: out };
}

/** Run `command` (`shell: false`) or `shell` (`shell: true`) as Ansible does; see the file header. */
export async function runCommand(input: CommandArgs, ctx: ModuleContext, shell: boolean): Promise<ModuleResult<CommandData>> {
  const name = shell ? 'shell' : 'command';
  const m = merged(input);
  if (m.error) return { status: 'failed', msg: m.error };
  const args = m.args;
  const given = [args._raw_params, args.cmd, args.argv].filter((v) => v !== undefined && v !== '').length;
  if (given === 0) return { status: 'failed', msg: `${name}: no command given: one of the following is required: _raw_params (the free form), cmd, argv` };
  if (given > 1) return { status: 'failed', msg: `${name}: parameters are mutually exclusive: _raw_params (the free form)|cmd|argv` };
  if (shell && args.argv !== undefined) return { status: 'failed', msg: 'shell: argv is not supported by shell (a shell runs a command line): use cmd, or the command module' };
  const line = args._raw_params ?? args.cmd;
  let cmd: string | string[];
  if (line !== undefined && !shell) {
    try {
      cmd = shlexSplit(line);
    } catch (e) {
      return { status: 'failed', msg: `${name}: cannot split the command line: ${(e as Error).message}`, data: { cmd: line } };
    }
  } else cmd = line ?? (args.argv as string[]);
  const data: CommandData = { cmd, rc: null, stdout: '', stderr: '', stdout_lines: [], stderr_lines: [], start: null, end: null, delta: null };
  const env = { ...process.env, ...taskEnvironment(ctx), ...args.env };
  const cwd = args.chdir !== undefined && args.chdir !== '' ? localPath(args.chdir) : process.cwd();
  if (!existsSync(cwd) || !statSync(cwd).isDirectory()) return { status: 'failed', msg: `Unable to change directory before execution: ${cwd} is not a directory`, data };
  // as Ansible: `chdir` happens first, so relative `creates`/`removes` are relative to it
  const at = (p: string): string => path.resolve(cwd, expandUserVars(p));
  const would = ctx.checkMode ? 'Would' : 'Did';
  if (args.creates && globExists(at(args.creates))) {
    return { status: 'ok', msg: `${would} not run command since '${args.creates}' exists`, data: { ...data, rc: 0, stdout: `skipped, since ${args.creates} exists`, stdout_lines: [`skipped, since ${args.creates} exists`] } };
  }
  if (args.removes && !globExists(at(args.removes))) {
    return { status: 'ok', msg: `${would} not run command since '${args.removes}' does not exist`, data: { ...data, rc: 0, stdout: `skipped, since ${args.removes} does not exist`, stdout_lines: [`skipped, since ${args.removes} does not exist`] } };
  }
  if (ctx.checkMode) {
    const msg = 'Command would have run if not in check mode';
    if (args.creates === undefined && args.removes === undefined) return { status: 'skipped', msg, data: { ...data, rc: 0 } };
    return { status: 'changed', msg, data: { ...data, rc: 0 } };
  }
  let prog: string;
  let rest: string[];
  if (typeof cmd === 'string') {
    prog = args.executable ?? '/bin/sh';
    rest = ['-c', cmd];
  } else {
    const expanded = args.expand_argument_vars === false ? cmd : cmd.map((a) => expandUserVars(a, env));
    if (expanded.length === 0) return { status: 'failed', msg: `${name}: the command line is empty`, data };
    [prog, ...rest] = expanded as [string, ...string[]];
  }
  let stdin = args.stdin;
  if (stdin !== undefined && stdin !== '' && args.stdin_add_newline) stdin += '\n';
  const started = pyNow();
  // Own process group, so cancelling kills the whole pipeline; tethered, so the group is stopped
  // even when kplay is killed outright.
  const r = await runProcess(prog, rest, { cwd, env, input: stdin ?? '', signal: ctx.signal, group: true, termGraceMs: 5000, maxOutput: MAX_OUTPUT });
  const ended = pyNow();
  if (r.error) {
    const errno = r.error.code === 'ENOENT' ? '[Errno 2] No such file or directory' : r.error.code === 'EACCES' ? '[Errno 13] Permission denied' : r.error.message;
    return { status: 'failed', msg: `Error executing command: ${errno}: '${prog}'`, data: { ...data, rc: r.error.code === 'EACCES' ? 13 : 2 } };
  }
  const rc = r.code ?? (r.signal ? -(constants.signals[r.signal] ?? 1) : 1);
  const strip = (s: string): string => (args.strip_empty_ends ? s.replace(/[\r\n]+$/, '') : s);
  const stdout = strip(r.stdout);
  const stderr = strip(r.stderr);
  const done: CommandData = { cmd, rc, stdout, stderr, stdout_lines: splitLines(stdout), stderr_lines: splitLines(stderr), start: started.text, end: ended.text, delta: delta(started, ended) };
  const display = typeof cmd === 'string' ? cmd : cmd.join(' ');
  if (ctx.signal.aborted) return { status: 'failed', msg: `${name} cancelled: ${display}`, data: done, changed: true };
  // It ran, so (as in Ansible) it counts as changed even when it failed.
  if (!args.ok_codes.includes(rc)) {
    // Ansible prints the whole result on failure; kplay prints the message: show the output's end too.
    const tail = (stderr || stdout).split('\n').slice(-5).join('\n');
    if (tail) ctx.log.warn(`rc=${rc}${r.signal ? ` (signal ${r.signal})` : ''}: ${tail}`);
    return { status: 'failed', msg: 'non-zero return code', data: done, changed: true };
  }
  return { status: 'changed', msg: '', data: done };
}

const nullable = (s: ReturnType<typeof Type.String>, description: string): ReturnType<typeof Type.Union> => Type.Union([s, Type.Null()], { description });

/** The `result` schema of `command` and `shell` (what `register` stores besides changed/failed/msg). */
export const commandResult = Type.Object({
  cmd: Type.Union([Type.String(), Type.Array(Type.String()), Type.Null()], { description: 'What ran: the argument list for `command`, the command line for `shell`.' }),
  rc: Type.Union([Type.Integer(), Type.Null()], { description: 'Exit code (minus the signal number when killed by a signal, as Python reports it; 0 when skipped by creates/removes).' }),
  stdout: Type.String({ description: 'Standard output (trailing newlines removed with `strip_empty_ends`).' }),
  stderr: Type.String({ description: 'Standard error (trailing newlines removed with `strip_empty_ends`).' }),
  stdout_lines: Type.Array(Type.String(), { description: '`stdout` split into lines.' }),
  stderr_lines: Type.Array(Type.String(), { description: '`stderr` split into lines.' }),
  start: nullable(Type.String(), 'When the command started (`2026-01-31 12:00:00.123456`, local time); null when it did not run.'),
  end: nullable(Type.String(), 'When the command ended; null when it did not run.'),
  delta: nullable(Type.String(), 'How long it ran (`0:00:00.003748`); null when it did not run.'),
});
