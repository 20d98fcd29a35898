/**
 * The controller's Python, as ansible-core names it: `ansible_playbook_python` and the implicit
 * localhost's `ansible_python_interpreter` are ansible-core's `sys.executable` (the Python running
 * ansible-playbook). kplay runs no Python, so it names the first `python3` (then `python`) on PATH,
 * else `/usr/bin/python3` — what a task running `{{ ansible_playbook_python }} -c …` would find.
 */
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

const found = new Map<string, string>();

/** The absolute path of the controller's Python on `env.PATH` (looked up once per PATH). */
export function controllerPython(env: NodeJS.ProcessEnv = process.env): string {
  const key = env.PATH ?? '';
  const known = found.get(key);
  if (known !== undefined) return known;
  const p = lookup(key);
  found.set(key, p);
  return p;
}

function lookup(pathVar: string): string {
  for (const name of ['python3', 'python']) {
    for (const dir of pathVar.split(path.delimiter)) {
      if (!dir) continue;
      const p = path.join(dir, name);
      try {
        accessSync(p, constants.X_OK);
        return p;
      } catch {
        // not here
      }
    }
  }
  return '/usr/bin/python3';
}
