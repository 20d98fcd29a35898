/**
 * `helm_repository` (kubernetes.core.helm_repository): add or remove a chart repository in helm's
 * repositories file, with `helm repo add`/`helm repo remove` — only when the file must change.
 */
import { readFile } from 'node:fs/promises';
import { aliased, kcoreMessage, TaskFailure, defineModule, Default, HelmAuthProps, HelmError, helmFor, parseRepositories, repositoryConfigPath, StringEnum, Type, type HelmCli, type RepoEntry, setting } from 'kplay/sdk';

const schema = Type.Object(
  {
    repo_name: Type.Optional(Type.String({ minLength: 1, description: 'Repository name (alias `name`). Required.', 'x-kplay-example': 'myrepo' })),
    name: Type.Optional(Type.String({ minLength: 1, description: 'Alias of `repo_name`.' })),
    repo_url: Type.Optional(Type.String({ minLength: 1, description: 'Repository URL (alias `url`). Required when present.', 'x-kplay-example': 'https://charts.example.com' })),
    url: Type.Optional(Type.String({ minLength: 1, description: 'Alias of `repo_url`.' })),
    repo_username: Type.Optional(Type.String({ minLength: 1, description: 'Username for the repository (alias `username`); with `repo_password`.' })),
    username: Type.Optional(Type.String({ minLength: 1, description: 'Alias of `repo_username`.' })),
    repo_password: Type.Optional(Type.String({ minLength: 1, description: 'Password for the repository (alias `password`); given to helm on its standard input, masked in all output.' })),
    password: Type.Optional(Type.String({ minLength: 1, description: 'Alias of `repo_password`.' })),
    repo_state: Type.Optional(StringEnum(['present', 'absent'], { description: '`present` (default) adds the repository, `absent` removes it (alias `state`).' })),
    state: Type.Optional(StringEnum(['present', 'absent'], { description: 'Alias of `repo_state`.' })),
    pass_credentials: Default(Type.Boolean({ description: 'Pass the credentials to every domain the repository links to (`--pass-credentials`).' }), false),
    force_update: Type.Optional(Type.Boolean({ description: 'Replace a repository of the same name whose settings differ (`--force-update`) instead of failing (alias `force`). Default: false.' })),
    force: Type.Optional(Type.Boolean({ description: 'Alias of `force_update`.' })),
    insecure_skip_tls_verify: Type.Optional(Type.Boolean({ description: "Do not verify the repository's TLS certificate (alias `skip_tls_certs_check`). Default: false." })),
    skip_tls_certs_check: Type.Optional(Type.Boolean({ description: 'Alias of `insecure_skip_tls_verify`.' })),
    // kubernetes.core gives helm_repository its helm connection arguments too (`module_defaults`
    // for group/k8s fill them in); `helm repo add`/`remove` does not talk to the cluster
    ...HelmAuthProps,
  },
  { additionalProperties: false },
);

const result = Type.Object({
  stdout: Type.Optional(Type.String({ description: 'Output of `helm repo add`/`remove` (when it ran).' })),
  stdout_lines: Type.Optional(Type.Array(Type.String(), { description: '`stdout` split into lines.' })),
  stderr: Type.Optional(Type.String({ description: 'Error output of that command.' })),
  stderr_lines: Type.Optional(Type.Array(Type.String(), { description: '`stderr` split into lines.' })),
  command: Type.Optional(Type.String({ description: 'The helm command run (the password masked).' })),
  repo_name: Type.Optional(Type.String({ description: 'The repository name (when nothing changed).' })),
  repo_url: Type.Optional(Type.String({ description: 'The repository URL (when nothing changed).' })),
});

/** What kplay compares: the repositories file entry helm would write. */
function sameEntry(e: RepoEntry, want: Omit<RepoEntry, 'name'>): boolean {
  return e.url === want.url && e.username === want.username && e.password === want.password && e.pass_credentials_all === want.pass_credentials_all && e.insecure_skip_tls_verify === want.insecure_skip_tls_verify;
}

async function repositories(helm: HelmCli, signal: AbortSignal): Promise<{ file: string; repos: RepoEntry[] }> {
  const env = await helm.runOk('helm env', ['env'], { signal });
  let file: string;
  try {
    file = repositoryConfigPath(env.stdout);
  } catch (e) {
    throw new TaskFailure(e instanceof Error ? e.message : String(e));
  }
  let text = '';
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new TaskFailure(`helm repositories file ${file}: cannot read it: ${e instanceof Error ? e.message : String(e)}`);
  }
  try {
    return { file, repos: parseRepositories(text) };
  } catch (e) {
    throw new TaskFailure(`helm repositories file ${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

const lines = (s: string): string[] => (s ? s.replace(/\n$/, '').split('\n') : []);

export default defineModule({
  name: 'helm_repository',
  summary: 'kubernetes.core.helm_repository: add or remove a Helm chart repository (changed only when repositories.yaml changes)',
  description:
    "kubernetes.core's `helm_repository`: `helm repo add` when the repository is missing (or, with `force_update`, when its URL, credentials or TLS setting differ), `helm repo remove` when it must go. The repositories file is the one helm uses (`HELM_REPOSITORY_CONFIG`, `HELM_CONFIG_HOME`), read to decide; a rerun changes nothing and reports ok. The password goes to helm on its standard input (`--password-stdin`), never on the command line, and is masked. Differences: kubernetes.core reports changed for every run with `force_update: true` (it re-adds the repository), kplay only when the entry differs.",
  schema,
  result,
  checkMode: 'supported',
  diffMode: 'unsupported',
  declaresState: true,
  examples: [
    { title: 'Add a repository', yaml: '- helm_repository:\n    name: myrepo\n    repo_url: https://charts.example.com' },
    { title: 'Remove it', yaml: '- helm_repository:\n    name: myrepo\n    repo_state: absent' },
  ],
  async run(args, ctx) {
    const get = <T>(name: string, alias: string): T | undefined => {
      const r = aliased<T>(args, name, alias);
      if (r.warning) ctx.log.warn(r.warning);
      return r.value;
    };
    const name = get<string>('repo_name', 'name');
    const url = get<string>('repo_url', 'url');
    const username = get<string>('repo_username', 'username');
    const password = get<string>('repo_password', 'password');
    const state = get<'present' | 'absent'>('repo_state', 'state') ?? 'present';
    const force = get<boolean>('force_update', 'force') ?? false;
    const insecure = get<boolean>('insecure_skip_tls_verify', 'skip_tls_certs_check') ?? false;
    if (password) ctx.addSecret(password);
    if (!name) return { status: 'failed', msg: 'missing required arguments: repo_name' };
    if (state === 'present' && !url) return { status: 'failed', msg: 'repo_state is present but all of the following are missing: repo_url' };
    if ((username === undefined) !== (password === undefined)) return { status: 'failed', msg: 'parameters are required together: repo_username, repo_password' };
    const binary = args.binary_path ?? setting('helm');
    try {
      const helm = await helmFor(ctx, binary, {});
      const { file, repos } = await repositories(helm, ctx.signal);
      const current = repos.find((r) => r.name === name);
      let cmd: string[] | undefined;
      let input: string | undefined;
      if (state === 'absent') {
        if (current) cmd = ['repo', 'remove', name];
      } else if (url) {
        const want = { url, username: username ?? '', password: password ?? '', pass_credentials_all: args.pass_credentials, insecure_skip_tls_verify: insecure };
        if (current && !sameEntry(current, want) && !force) {
          if (current.url !== url) return { status: 'failed', msg: `Repository already have a repository named ${name}` };
        } else if (!current || !sameEntry(current, want)) {
          cmd = ['repo', 'add', name, url];
          if (username !== undefined && password !== undefined) {
            cmd.push('--username', username, '--password-stdin');
            input = password;
          }
          if (args.pass_credentials) cmd.push('--pass-credentials');
          if (force) cmd.push('--force-update');
          if (insecure) cmd.push('--insecure-skip-tls-verify');
        }
      }
      if (!cmd) return { status: 'ok', registerMsg: false, msg: `repository ${name} is ${state === 'absent' ? 'absent' : `present (${url ?? ''})`} in ${file}`, data: { repo_name: name, ...(url !== undefined ? { repo_url: url } : {}) } };
      const what = state === 'absent' ? `remove repository ${name}` : `${current ? 'update' : 'add'} repository ${name} (${url ?? ''})`;
      if (ctx.checkMode) return { status: 'changed', registerMsg: false, msg: `would ${what}` };
      const r = await helm.runOk(`helm ${cmd.slice(0, 2).join(' ')} ${name}`, cmd, { signal: ctx.signal, input }, true);
      const command = helm.lastWrite?.command ?? ctx.mask(`${binary} ${cmd.join(' ')}`);
      const stdout = ctx.mask(r.stdout);
      const stderr = ctx.mask(r.stderr);
      return { status: 'changed', registerMsg: false, msg: `${what.replace(/^(\w+)/, (w) => (w === 'add' ? 'added' : w === 'remove' ? 'removed' : 'updated'))}`, data: { stdout, stdout_lines: lines(stdout), stderr, stderr_lines: lines(stderr), command } };
    } catch (e) {
      if (e instanceof HelmError || e instanceof TaskFailure) return { status: 'failed', msg: kcoreMessage(ctx.mask(e.message)) };
      throw e;
    }
  },
});
