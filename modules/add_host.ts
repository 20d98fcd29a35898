/** `add_host`: add a host (a cluster) and groups to the run's in-memory inventory, as ansible-core's action. */
import { isIPv4, isIPv6 } from 'node:net';
import { defineModule, Type } from 'kplay/sdk';

/** The keys ansible-core's action reads itself; every other argument is a host variable (`host` and `group` too, as there). */
const SPECIAL = new Set(['name', 'hostname', 'groupname', 'groups']);

const LABEL = String.raw`[\p{L}\p{N}_](?:[\p{L}\p{N}_-]*(?<![_-]))?`;
const HOSTNAME = new RegExp(String.raw`^${LABEL}(?:\.${LABEL})*$`, 'u');

/** ansible-core's `parse_address(name, allow_ranges=False)`: the host and port of `host:port`, `[v6]:port`; undefined when it is no address it knows. */
export function parseAddress(address: string): { host: string; port?: number } | undefined {
  let host = address;
  let port: number | undefined;
  const m = /^\[(.+)\]:([0-9]+)$/su.exec(address) ?? /^((?:[^:[\]]|\[[^\]]*\])*):([0-9]+)$/su.exec(address);
  if (m) {
    host = m[1] ?? '';
    port = Number(m[2]);
  }
  if (host.includes('[')) return undefined;
  if (!isIPv4(host) && !isIPv6(host) && !HOSTNAME.test(host)) return undefined;
  return port === undefined ? { host } : { host, port };
}

/** Any key: `name` (or `hostname`, `host`), `groups` (or `groupname`, `group`), and host variables. */
/** Python's `type(x)` as ansible-core prints it. */
function pyType(v: unknown): string {
  const t = typeof v === 'string' ? 'str' : typeof v === 'boolean' ? 'bool' : typeof v === 'number' ? (Number.isInteger(v) ? 'int' : 'float') : Array.isArray(v) ? 'list' : v === null ? 'NoneType' : 'dict';
  return `<class '${t}'>`;
}

const schema = Type.Record(Type.String(), Type.Unknown({ description: 'An argument: `name`/`hostname`/`host` (the host; `host:port` sets `ansible_ssh_port`), `groups`/`groupname`/`group` (a list or a comma-separated string), or a host variable.' }), { additionalProperties: false });

export default defineModule({
  name: 'add_host',
  summary: 'Add a host and groups to the in-memory inventory for the following plays',
  description:
    "As ansible-core's: runs once per batch (on its first cluster; in a loop, once per item), the host joins `all` and the groups given (made when missing), every argument but `name`/`hostname`/`groups`/`groupname` is a host variable (merged with the host's own), and the task is changed when the inventory changed. The host is a kplay cluster: its connection is resolved as an Ansible inventory host's (`kplay_context`, else `$K8S_AUTH_CONTEXT`, else the kubeconfig's current context; `kplay_kubeconfig` / `ansible_kubeconfig`-style vars as in the inventory). It is a target of the plays that follow, not of the play that is running.",
  anyKeys: true,
  freeForm: '_raw_params',
  bypassHostLoop: true,
  schema,
  result: Type.Object({ add_host: Type.Object({ host_name: Type.String(), groups: Type.Array(Type.String()), host_vars: Type.Record(Type.String(), Type.Unknown()) }, { description: 'What was added (as ansible-core registers it).' }) }),
  diffMode: 'unsupported',
  checkMode: 'supported',
  examples: [
    { title: 'Add a cluster to a group for the next play', yaml: '- add_host:\n    name: staging-eu\n    groups: [canary]\n    kplay_context: staging-eu' },
    { title: 'The free form', yaml: '- add_host: name=staging-eu groups=canary region=eu' },
  ],
  async run(args, ctx) {
    let raw = args as Record<string, unknown>;
    // as ansible-core: the free form must be a mapping (`add_host: "{{ host_spec }}"`), merged under the other arguments
    if ('_raw_params' in raw) {
      const { _raw_params: given, ...rest } = raw;
      if (given === null || typeof given !== 'object' || Array.isArray(given)) return { status: 'failed', msg: `Invalid raw parameters passed, requires a dictionary/mapping got a  ${pyType(given)}` };
      raw = { ...(given as Record<string, unknown>), ...rest };
    }
    const given = raw.name ?? raw.hostname ?? raw.host;
    if (given === undefined || given === null) return { status: 'failed', msg: 'name, host or hostname needs to be provided' };
    const newName = String(given);
    const parsed = parseAddress(newName);
    const name = parsed?.host ?? newName;
    const hostVars: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(raw)) if (!SPECIAL.has(k)) hostVars[k] = v;
    if (parsed?.port !== undefined) hostVars.ansible_ssh_port = parsed.port;
    const g = raw.groupname ?? raw.groups ?? raw.group ?? '';
    const groups: string[] = [];
    if (g !== '' && g !== null && g !== false) {
      const list = Array.isArray(g) ? g : typeof g === 'string' ? g.split(',') : undefined;
      if (!list) return { status: 'failed', msg: 'Groups must be specified as a list.' };
      // as ansible-core: each name is compared before it is stripped, and kept stripped
      for (const item of list) if (!groups.includes(String(item))) groups.push(String(item).trim());
    }
    const add_host = { host_name: name, groups, host_vars: hostVars };
    if (!ctx.inventory) return { status: 'failed', msg: 'add_host runs only in a play (it changes the run\'s inventory)' };
    const changed = await ctx.inventory.addHost({ name, groups, vars: hostVars });
    return { status: changed ? 'changed' : 'ok', data: { add_host } };
  },
});
