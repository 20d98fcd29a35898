/**
 * Path expansion for kubeconfig paths: `~/`, `$VAR` / `${VAR}`, relative paths, and the
 * `$KUBECONFIG` / `~/.kube/config` default.
 */
import { setting } from '../core/settings.js';
import { homedir } from 'node:os';
import path from 'node:path';

/** The home directory according to `env` (`$HOME`, falling back to the OS). */
export function homeDir(env: NodeJS.ProcessEnv): string {
  return env.HOME && env.HOME.length > 0 ? env.HOME : homedir();
}

/** Expand a leading `~` (alone or followed by `/`). `~user` is not supported and throws. */
export function expandTilde(p: string, env: NodeJS.ProcessEnv): string {
  if (p === '~') return homeDir(env);
  if (p.startsWith('~/')) return path.join(homeDir(env), p.slice(2));
  if (p.startsWith('~')) throw new Error(`'${p}': only '~/' is supported, not '~user'`);
  return p;
}

/**
 * Expand `$VAR` and `${VAR}` from `env`. An unset (or empty) variable throws, so a typo
 * cannot silently produce a wrong path.
 */
export function expandEnvVars(p: string, env: NodeJS.ProcessEnv): string {
  return p.replace(/\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g, (_m, braced: string | undefined, bare: string | undefined) => {
    const name = braced ?? bare ?? '';
    const value = env[name];
    if (value === undefined || value === '') throw new Error(`environment variable $${name} is not set`);
    return value;
  });
}

/** Expand `$VAR`s, then `~`, then resolve against `baseDir`. Throws `Error` on an unset variable. */
export function expandPath(p: string, baseDir: string, env: NodeJS.ProcessEnv): string {
  return path.resolve(baseDir, expandTilde(expandEnvVars(p, env), env));
}

/**
 * The default kubeconfig: the first non-empty path of `$KUBECONFIG` (a `:`-separated list;
 * `~` expanded, relative to `cwd`), else `~/.kube/config`.
 *
 * Only the first path of a list is used: kplay connects each cluster through one file.
 */
export function defaultKubeconfig(env: NodeJS.ProcessEnv, cwd: string): string {
  const first = (setting('kubeconfig', env) ?? '')
    .split(path.delimiter)
    .map((s) => s.trim())
    .find((s) => s.length > 0);
  if (first) return path.resolve(cwd, expandTilde(first, env));
  return path.join(homeDir(env), '.kube', 'config');
}
