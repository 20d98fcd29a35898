/** `kplay modules [NAME]`: list modules, or print one module's documentation. */
import { InputError } from '../load/errors.js';
import { moduleMarkdown } from '../plugins/docs.js';
import { loadRegistry } from '../plugins/registry.js';
import { reportError } from './common.js';
import { EXIT, type ExitCode } from '../core/exit.js';

export async function modulesCommand(name: string | undefined, flags: { modulePath?: string[] }): Promise<ExitCode> {
  try {
    const reg = await loadRegistry({ modulePaths: flags.modulePath, searchDirs: [process.cwd()] });
    reg.compileAll();
    if (!name) {
      const list = reg.list();
      const w = Math.max(...list.map((r) => r.module.name.length));
      for (const r of list) process.stdout.write(`${r.module.name.padEnd(w)}  ${r.module.summary}\n`);
      return EXIT.ok;
    }
    const m = reg.get(name);
    if (!m) {
      const s = reg.suggest(name);
      throw new InputError(`no module named '${name}'`, undefined, s.length ? `did you mean: ${s.join(', ')}?` : `modules: ${reg.names().join(', ')}`);
    }
    process.stdout.write(moduleMarkdown(m, 1));
    return EXIT.ok;
  } catch (e) {
    return reportError(e);
  }
}
