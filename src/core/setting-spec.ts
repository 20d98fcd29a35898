/**
 * The shape of a kplay setting (see the table in ./settings-table.ts): its variable, type, default,
 * doc and parser, its name in ansible-core's configuration, and the error a bad value gives.
 */

/** Environment variables as a map (`process.env`, or a task's environment merged over it). */
export type Env = Readonly<Record<string, string | undefined>>;

/** A bad value in an environment variable: the message names the variable, the value and what is accepted. */
export class SettingError extends Error {
  override name = 'SettingError';
  constructor(
    /** The environment variable. */
    readonly variable: string,
    message: string,
  ) {
    super(message);
  }
}

/** One setting: where it is read from and how. */
export interface SettingSpec<T> {
  /** The environment variable. */
  env: string;
  /** What the value is, for the docs (e.g. `seconds`, `path`). */
  type: string;
  /** The value when the variable is unset. */
  default: T;
  /** The default as the docs show it (when not `String(default)`). */
  defaultDoc?: string;
  /** The command-line flag of the same meaning, which wins over the variable. */
  flag?: string;
  /** What it does. */
  doc: string;
  /** The value from the variable's text; throws an Error saying what is accepted. */
  parse: (raw: string) => T;
  /** The same setting as ansible-core names it: read after `env`, from its `ANSIBLE_*` variable, then ansible.cfg. */
  ansible?: AnsibleName<T>;
}

/** A setting's name in ansible-core's configuration (lib/ansible/config/base.yml). */
export interface AnsibleName<T> {
  /** ansible-core's name, as `ansible-config dump` prints it (`DEFAULT_ROLES_PATH`). */
  name: string;
  /** Its environment variable. */
  env: string;
  /** Its ansible.cfg section and key. */
  ini: readonly [section: string, key: string];
  /** The value from the text, with `base` the directory relative paths are resolved from (the ansible.cfg's, or the working directory for a variable) and `env` the variables `$VAR` and `~` expand from. */
  parse: (raw: string, base: string, env: Env) => T;
  /** The default when neither kplay's variable nor Ansible's sources set it (Ansible's, where it depends on `HOME`); else `default`. */
  default?: (env: Env) => T;
  /** What kplay does not do with it (ignored settings say why). */
  note?: string;
}
