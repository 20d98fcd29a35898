/**
 * `pip` (ansible.builtin.pip): install, upgrade or remove Python packages on the machine running
 * kplay, as Ansible does under `connection: local` — with the same commands, so the same outcome:
 * pip of a virtualenv (created when missing), of `executable`, or `python3 -m pip` (the
 * `ansible_python_interpreter` variable names another Python). Kubernetes playbooks use it to
 * install the Python client kubernetes.core needs; kplay's own modules need none, but the task
 * still does what it says.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { tmpdir } from 'node:os';
import { defineModule, runProcess, shlexSplit, Default, StringEnum, Type } from 'kplay/sdk';

const STATES = { present: ['install'], absent: ['uninstall', '-y'], latest: ['install', '-U'], forcereinstall: ['install', '-U', '--force-reinstall'] } as const;

/** A requirement as written (`name`, `name[extra]>=1.0,<2`): its normalised name and specifiers. */
function parseRequirement(req: string): { name: string; specs: [string, string][] } {
  const m = /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$/.exec(req);
  const name = (m?.[1] ?? req).toLowerCase().replace(/[-_.]+/g, '-');
  const specs = (m?.[3] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s): [string, string] => {
      const op = /^(===|==|!=|~=|>=|<=|>|<)\s*(.+)$/.exec(s);
      return op ? [op[1] as string, (op[2] as string).trim()] : ['==', s];
    });
  return { name, specs };
}

/** PEP 440 versions compared by their release numbers (then a final release above its pre-releases). */
function compareVersions(a: string, b: string): number {
  const parse = (v: string): { nums: number[]; pre: boolean } => {
    const m = /^v?(\d+(?:\.\d+)*)(.*)$/i.exec(v.trim());
    return { nums: (m?.[1] ?? '0').split('.').map(Number), pre: /^(a|b|rc|alpha|beta|c|pre|preview|dev)/i.test((m?.[2] ?? '').replace(/^[-_.]/, '')) };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < Math.max(x.nums.length, y.nums.length); i++) {
    const d = (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return x.pre === y.pre ? 0 : x.pre ? -1 : 1;
}

/** Whether installed version `v` satisfies every specifier. */
function satisfies(v: string, specs: [string, string][]): boolean {
  return specs.every(([op, want]) => {
    if (want.endsWith('.*') && (op === '==' || op === '!=')) {
      const prefix = want.slice(0, -2);
      const match = v === prefix || v.startsWith(`${prefix}.`);
      return op === '==' ? match : !match;
    }
    const c = compareVersions(v, want);
    switch (op) {
      case '==':
      case '===':
        return c === 0;
      case '!=':
        return c !== 0;
      case '>=':
        return c >= 0;
      case '<=':
        return c <= 0;
      case '>':
        return c > 0;
      case '<':
        return c < 0;
      default: {
        // ~=X.Y: >= X.Y and == X.*
        const parts = want.split('.');
        const prefix = parts.slice(0, -1).join('.');
        return c >= 0 && (v === prefix || v.startsWith(`${prefix}.`));
      }
    }
  });
}

export default defineModule({
  name: 'pip',
  summary: 'Manage Python packages on the machine running kplay (ansible.builtin.pip)',
  description:
    'Runs pip as ansible.builtin.pip does under `connection: local`: `pip install` (present), `install -U` (latest), `install -U --force-reinstall`, `uninstall -y` (absent) of `name` (with `version`) or `-r requirements`, with `extra_args`/`editable`, in `chdir`. The pip is that of `virtualenv` (created with `virtualenv_command` when it has no `bin/activate`), else `executable`, else `python3 -m pip` (or the Python `ansible_python_interpreter` names). `changed` as Ansible decides it: pip said `Successfully installed` / `Successfully uninstalled` (or the virtualenv was created); in check mode, from `pip freeze` and the version specifiers. Result: `cmd`, `name`, `version`, `state`, `requirements`, `virtualenv`, `stdout`, `stderr`.',
  schema: Type.Object(
    {
      name: Type.Optional(Type.Union([Type.Array(Type.String()), Type.String()], { description: 'Package(s), with version specifiers (`kubernetes>=24.2`), URLs or paths.', examples: [['kubernetes>=24.2.0', 'PyYAML']] })),
      version: Type.Optional(Type.String({ description: 'Version of the one package in `name`.' })),
      requirements: Type.Optional(Type.String({ description: 'A requirements file (relative to `chdir`).' })),
      state: Default(StringEnum(['present', 'absent', 'latest', 'forcereinstall'], { description: 'What to do with the packages.' }), 'present'),
      virtualenv: Type.Optional(Type.String({ description: 'A virtualenv to install into (created when it has no `bin/activate`).' })),
      virtualenv_site_packages: Default(Type.Boolean({ description: 'Create the virtualenv with `--system-site-packages`.' }), false),
      virtualenv_command: Default(Type.String({ description: 'Command creating the virtualenv (`virtualenv`, `python3 -m venv`, …).' }), 'virtualenv'),
      virtualenv_python: Type.Optional(Type.String({ description: 'Python of the new virtualenv (`-p` of `virtualenv`; not with `venv`).' })),
      extra_args: Type.Optional(Type.String({ description: 'More pip arguments (`--index-url …`, `--user`).' })),
      editable: Default(Type.Boolean({ description: 'Install in editable mode (`-e`).' }), false),
      chdir: Type.Optional(Type.String({ description: 'Directory to run pip in (default: the temporary directory).' })),
      executable: Type.Optional(Type.String({ description: 'The pip to run (not with `virtualenv`).' })),
      umask: Type.Optional(Type.String({ description: 'Accepted; the umask of the files pip writes is kplay\'s.' })),
      break_system_packages: Default(Type.Boolean({ description: 'Let pip change an externally managed Python (`PIP_BREAK_SYSTEM_PACKAGES=1`).' }), false),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    cmd: Type.Optional(Type.Union([Type.Array(Type.String()), Type.String()], { description: 'The pip command run.' })),
    name: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'The packages.' })),
    version: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'The `version` given.' })),
    state: Type.Optional(Type.String({ description: 'The state.' })),
    requirements: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'The requirements file.' })),
    virtualenv: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'The virtualenv.' })),
    stdout: Type.Optional(Type.String({ description: 'What pip printed.' })),
    stderr: Type.Optional(Type.String({ description: 'What pip printed on stderr.' })),
  }),
  diffMode: 'unsupported',
  checkMode: 'supported',
  declaresState: true,
  examples: [{ title: 'The Python client kubernetes.core needs (for playbooks that also run under Ansible)', yaml: '- pip:\n    name: [kubernetes>=24.2.0, PyYAML]\n    virtualenv: /opt/ansible-venv\n    virtualenv_command: python3 -m venv' }],
  async run(args, ctx) {
    const names = args.name === undefined ? undefined : Array.isArray(args.name) ? args.name : args.name.split(',').map((s) => s.trim());
    if (names === undefined && args.requirements === undefined) return { status: 'failed', msg: 'one of the following is required: name, requirements' };
    if (names !== undefined && args.requirements !== undefined) return { status: 'failed', msg: 'parameters are mutually exclusive: name|requirements' };
    if (args.executable !== undefined && args.virtualenv !== undefined) return { status: 'failed', msg: 'parameters are mutually exclusive: executable|virtualenv' };
    if (args.state === 'latest' && args.version !== undefined) return { status: 'failed', msg: 'version is incompatible with state=latest' };
    const chdir = args.chdir ?? tmpdir();
    const env = args.virtualenv !== undefined ? (args.chdir ? path.resolve(args.chdir, args.virtualenv) : args.virtualenv) : undefined;
    const penv: NodeJS.ProcessEnv = { ...process.env, ...ctx.environment, ...(args.break_system_packages ? { PIP_BREAK_SYSTEM_PACKAGES: '1' } : {}) };
    if (env) penv.PATH = `${path.join(env, 'bin')}:${penv.PATH ?? ''}`;
    const run = (argv: string[]) => runProcess(argv[0] as string, argv.slice(1), { cwd: chdir, env: penv, signal: ctx.signal });
    let out = '';
    let err = '';
    let created = false;
    if (env && !existsSync(path.join(env, 'bin', 'activate'))) {
      if (ctx.checkMode) return { status: 'changed', msg: `virtualenv ${env} would be created`, data: {} };
      const cmd = shlexSplit(args.virtualenv_command);
      if (args.virtualenv_site_packages) cmd.push('--system-site-packages');
      if (args.virtualenv_python && !cmd.some((c) => c.includes('venv') && !c.includes('virtualenv'))) cmd.push('-p', args.virtualenv_python);
      cmd.push(env);
      const r = await run(cmd);
      out += r.stdout;
      err += r.stderr;
      if (r.code !== 0) return { status: 'failed', msg: `Failed to create the virtualenv ${env}: ${r.error?.message ?? (r.stderr.trim() || r.stdout.trim())}`, data: { cmd: cmd.join(' '), stdout: out, stderr: err } };
      created = true;
    }
    const python = typeof ctx.vars.ansible_python_interpreter === 'string' && !ctx.vars.ansible_python_interpreter.includes('{{') ? ctx.vars.ansible_python_interpreter : 'python3';
    const pip = env ? [existsSync(path.join(env, 'bin', 'pip')) ? path.join(env, 'bin', 'pip') : path.join(env, 'bin', 'pip3')] : args.executable ? [args.executable] : [python, '-m', 'pip'];
    let packages = names;
    if (packages && args.version !== undefined) {
      if (packages.length > 1) return { status: 'failed', msg: "'version' argument is ambiguous when installing multiple package distributions. Please specify version restrictions next to each package in 'name' argument." };
      if (parseRequirement(packages[0] as string).specs.length) return { status: 'failed', msg: "The 'version' argument conflicts with any version specifier provided along with a package name. Please keep the version specifier, but remove the 'version' argument." };
      const v = args.version.trim();
      packages = [`${packages[0] as string}${/^[<>=!~]/.test(v) ? v : `==${v}`}`];
    }
    const cmd = [...pip, ...STATES[args.state]];
    let extra = args.extra_args ?? '';
    if (args.editable && !extra.split(' ').includes('-e')) extra = `${extra} -e`.trim();
    if (extra) cmd.push(...shlexSplit(extra));
    if (packages) cmd.push(...packages);
    else cmd.push('-r', args.requirements as string);
    const common = { name: names ?? null, version: args.version ?? null, state: args.state, requirements: args.requirements ?? null, virtualenv: env ?? null };

    if (ctx.checkMode) {
      const freezeCmd = [...pip, 'list', '--format=freeze'];
      if (extra || args.requirements !== undefined || args.state === 'latest' || !packages) return { status: 'changed', data: {} };
      const f = await run(freezeCmd);
      if (f.code !== 0) return { status: 'failed', msg: `${freezeCmd.join(' ')} failed: ${f.error?.message ?? f.stderr.trim()}` };
      const installed = new Map(
        f.stdout
          .split('\n')
          .map((l) => /^([^=\s]+)==(.+)$/.exec(l.trim()))
          .filter((m): m is RegExpExecArray => m !== null)
          .map((m) => [(m[1] as string).toLowerCase().replace(/[-_.]+/g, '-'), (m[2] as string).trim()]),
      );
      const changed = packages.some((p) => {
        const req = parseRequirement(p);
        const v = installed.get(req.name);
        const present = v !== undefined && satisfies(v, req.specs);
        return (args.state === 'present' && !present) || (args.state === 'absent' && present);
      });
      return { status: changed ? 'changed' : 'ok', data: { cmd: freezeCmd.join(' '), stdout: f.stdout, stderr: f.stderr } };
    }

    const r = await run(cmd);
    out += r.stdout;
    err += r.stderr;
    const notInstalled = r.code === 1 && args.state === 'absent' && (r.stdout.includes('not installed') || r.stderr.includes('not installed'));
    if (r.code !== 0 && !notInstalled) {
      const msg = r.error ? `Error executing command: ${r.error.message}` : [out ? `stdout: ${out}` : '', err ? `${out ? '\n:' : ''}stderr: ${err}` : ''].join('');
      return { status: 'failed', msg, data: { cmd: cmd.join(' '), stdout: out, stderr: err } };
    }
    const changed = (args.state === 'absent' ? r.stdout.includes('Successfully uninstalled') : r.stdout.includes('Successfully installed')) || created;
    return { status: changed ? 'changed' : 'ok', data: { cmd, ...common, stdout: out, stderr: err } };
  },
});
