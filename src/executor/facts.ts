/**
 * `gather_facts: true`: the facts that make sense without SSH. kplay runs every task on the
 * controller, so these describe the controller, as ansible-core's `setup` does for a play with
 * `connection: local`. Same names and shapes as ansible-core 2.19 (strings where it gives strings):
 * `date_time`, `env`, `hostname`, `nodename`, `fqdn`, `domain`, `system`, `kernel`,
 * `kernel_version`, `architecture`, `machine`, `user_id`, `user_uid`, `user_gid`, `user_dir`,
 * `user_shell`, `processor_nproc`, `memtotal_mb`. Each is set as `ansible_facts.<name>` and as
 * `ansible_<name>` (Ansible's INJECT_FACTS_AS_VARS).
 */
import os from 'node:os';

type Obj = Record<string, unknown>;

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** strftime's `%W`: week of the year, Monday the first day (days before the first Monday are week 0). */
function weekNumber(d: Date): number {
  const start = new Date(d.getFullYear(), 0, 1);
  const yday = Math.floor((new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime() - start.getTime()) / 86_400_000);
  const mondayBased = (d.getDay() + 6) % 7;
  return Math.floor((yday + 7 - mondayBased) / 7);
}

/** The time zone's abbreviation (`UTC`, `CET`), as `%Z` prints it where the platform knows it. */
function tzName(d: Date): string {
  const part = new Intl.DateTimeFormat('en-US', { timeZoneName: 'short' }).formatToParts(d).find((p) => p.type === 'timeZoneName');
  return part?.value === 'GMT' ? 'UTC' : (part?.value ?? 'UTC');
}

/** ansible-core's `date_time` fact for `now` (local time, and UTC for the iso8601 forms). */
export function dateTimeFact(now: Date = new Date()): Record<string, string> {
  const off = -now.getTimezoneOffset();
  const tzOffset = `${off >= 0 ? '+' : '-'}${pad(Math.floor(Math.abs(off) / 60))}${pad(Math.abs(off) % 60)}`;
  const micro = pad(now.getMilliseconds() * 1000, 6);
  const epoch = String(Math.floor(now.getTime() / 1000));
  const date = `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
  const time = `${pad(now.getHours())}:${pad(now.getMinutes())}:${pad(now.getSeconds())}`;
  const utc = now.toISOString(); // 2026-11-26T12:29:41.466Z
  const basic = `${date.replace(/-/g, '')}T${time.replace(/:/g, '')}`;
  const tz = tzName(now);
  return {
    year: String(now.getFullYear()),
    month: pad(now.getMonth() + 1),
    weekday: WEEKDAYS[now.getDay()] as string,
    weekday_number: String(now.getDay()),
    weeknumber: pad(weekNumber(now)),
    day: pad(now.getDate()),
    hour: pad(now.getHours()),
    minute: pad(now.getMinutes()),
    second: pad(now.getSeconds()),
    epoch,
    epoch_int: epoch,
    date,
    time,
    iso8601_micro: `${utc.slice(0, 19)}.${pad(now.getUTCMilliseconds() * 1000, 6)}Z`,
    iso8601: `${utc.slice(0, 19)}Z`,
    iso8601_basic: `${basic}${micro}`,
    iso8601_basic_short: basic,
    tz,
    tz_dst: tz,
    tz_offset: tzOffset,
  };
}

/** The facts (`ansible_facts`) and the variables they make (`ansible_facts` plus `ansible_<name>`). */
export function gatherFacts(now: Date = new Date()): { facts: Obj; vars: Obj } {
  const fqdn = os.hostname();
  const user = os.userInfo();
  const facts: Obj = {
    date_time: dateTimeFact(now),
    env: Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined)),
    hostname: fqdn.split('.')[0] ?? fqdn,
    nodename: fqdn,
    fqdn,
    domain: fqdn.includes('.') ? fqdn.slice(fqdn.indexOf('.') + 1) : '',
    system: os.type(),
    kernel: os.release(),
    kernel_version: os.version(),
    architecture: os.machine(),
    machine: os.machine(),
    user_id: user.username,
    user_uid: user.uid,
    user_gid: user.gid,
    user_dir: user.homedir,
    user_shell: user.shell ?? '',
    processor_nproc: os.availableParallelism(),
    memtotal_mb: Math.floor(os.totalmem() / (1024 * 1024)),
  };
  const vars: Obj = { ansible_facts: facts };
  for (const [k, v] of Object.entries(facts)) vars[`ansible_${k}`] = v;
  return { facts, vars };
}
