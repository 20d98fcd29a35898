/**
 * Secret provenance: which values ARE secrets, as opposed to values that are only masked because
 * of the name they are stored under. A value is a *declared* secret when it comes from an explicit
 * source — a scalar tagged `!secret`, the data of a Kubernetes Secret read or written by a task, a
 * `password` lookup, the facts and registered result of a `no_log` task — or is derived from one
 * by a template (`{{ db_password | downcase }}`). Declared secrets are masked in every output.
 *
 * Of them, kplay's *own* secrets — scalars tagged `!secret`, a kplay construct ansible-core cannot
 * load — and what is derived from them are refused where they cannot be masked (object names,
 * labels, command lines; see `src/executor/sinks.ts`). Every other declared secret is one Ansible
 * knows (a Vault value, a `no_log` result, a `password` lookup, a Secret's data read from the
 * cluster): ansible-playbook writes it wherever the playbook puts it, so kplay does too (masked in
 * its output, with a warning where it cannot be masked) and never refuses what Ansible accepts.
 *
 * Values are kept in memory only, to be compared with; nothing here is ever printed. What is
 * printed are the origins: variable paths (`db_password`, `creds.resources[0].data.password`).
 */
import { isRecord } from './shape.js';

/** Where a declared secret came from, as variable names/descriptions (never the value). */
export type Origins = readonly string[];

const ownSecrets = new Set<string>();

/** Remember `value` as the text of a `!secret` scalar (kplay's own secret, refused where it cannot be masked). */
export function rememberOwnSecret(value: string): void {
  ownSecrets.add(value);
}

/** True when `value` is the text of a `!secret` scalar some loaded YAML held. */
export function isOwnSecret(value: unknown): boolean {
  return (typeof value === 'string' || typeof value === 'number') && ownSecrets.has(String(value));
}

/** A variable secret as a whole: why, and whether it derives from kplay's own secrets (`!secret`). */
interface WholeVar {
  origins: Origins;
  own: boolean;
}

/** Strings too short or too common to be a secret worth tracking (`true`, `12`, `abc`). */
function trivial(s: string): boolean {
  const t = s.trim();
  return t.length < 4 || /^(true|false|null|none|yes|no)$/i.test(t) || /^-?\d{1,9}(\.\d+)?$/.test(t);
}

/** The keys of a `kubernetes.io/service-account-token` Secret that hold no secret (the token does). */
const SA_TOKEN_PUBLIC_KEYS: ReadonlySet<string> = new Set(['namespace', 'ca.crt']);

/** Whether `key` of Secret `o`'s data is public by design (a service account token's `namespace` and `ca.crt`): neither masked nor declared. */
export function publicSecretKey(o: Record<string, unknown>, key: string): boolean {
  return o.type === 'kubernetes.io/service-account-token' && SA_TOKEN_PUBLIC_KEYS.has(key);
}

/** The provenance store of one run (held by its `Masker`). */
export class SecretProvenance {
  /** Declared secret values (and values derived from them) → their origins. */
  private readonly values = new Map<string, Set<string>>();
  /** Per cluster: variables whose whole value is a declared secret (`no_log` results, facts derived from secrets, a loop over secrets). */
  private readonly vars = new Map<string, Map<string, WholeVar>>();
  /** The declared values that are, or derive from, kplay's own secrets (`!secret`). */
  private readonly own = new Set<string>();

  /** True when nothing was declared yet (the taint pass can be skipped). */
  get empty(): boolean {
    return this.values.size === 0 && this.vars.size === 0;
  }

  /** Number of declared values (grows as tasks derive new ones; tests and snapshots use it). */
  get size(): number {
    return this.values.size;
  }

  /**
   * Declare `value` (a string or number) a secret, with the variables it came from (may be none: a
   * `!secret` scalar); `own`: it is or derives from kplay's own secret (default: it is the text of a `!secret` scalar).
   */
  addValue(value: unknown, origins: Origins = [], own = isOwnSecret(value)): void {
    if (typeof value !== 'string' && typeof value !== 'number') return;
    const s = String(value);
    if (trivial(s)) return;
    let set = this.values.get(s);
    if (!set) this.values.set(s, (set = new Set()));
    for (const o of origins) set.add(o);
    if (own) this.own.add(s);
  }

  /** Declare every string leaf under `value` (bounded walk). */
  addLeaves(value: unknown, origins: Origins, own = false, depth = 0): void {
    if (depth > 32) return;
    if (typeof value === 'string' || typeof value === 'number') this.addValue(value, origins, own || undefined);
    else if (Array.isArray(value)) for (const v of value) this.addLeaves(v, origins, own, depth + 1);
    else if (value !== null && typeof value === 'object') for (const v of Object.values(value as Record<string, unknown>)) this.addLeaves(v, origins, own, depth + 1);
  }

  /** Whether `value` (a string, number, or a list/map with such a leaf) equals a declared value that is or derives from kplay's own secret. */
  ownIn(value: unknown, depth = 0): boolean {
    if (this.own.size === 0 || depth > 32) return false;
    if (typeof value === 'string' || typeof value === 'number') return this.own.has(String(value));
    if (Array.isArray(value)) return value.some((v) => this.ownIn(v, depth + 1));
    if (value !== null && typeof value === 'object') return Object.values(value as Record<string, unknown>).some((v) => this.ownIn(v, depth + 1));
    return false;
  }

  /**
   * The origins of the declared secrets `value` holds — a string or number equal to a declared
   * value, or a list/map with such a leaf; `undefined` when it holds none. (Equality, not
   * containment: a Secret's `username: admin` must not taint every name with `admin` in it.)
   */
  originsIn(value: unknown): Origins | undefined {
    if (this.values.size === 0) return undefined;
    let budget = 20_000; // a registered list of thousands of objects is walked once, bounded
    const found = new Set<string>();
    let any = false;
    const walk = (v: unknown, depth: number): void => {
      if (budget-- <= 0 || depth > 32) return;
      if (typeof v === 'string' || typeof v === 'number') {
        const hit = this.values.get(String(v));
        if (hit) {
          any = true;
          for (const o of hit) found.add(o);
        }
      } else if (Array.isArray(v)) for (const x of v) walk(x, depth + 1);
      else if (v !== null && typeof v === 'object') for (const x of Object.values(v as Record<string, unknown>)) walk(x, depth + 1);
    };
    walk(value, 0);
    return any ? [...found] : undefined;
  }

  /** Mark variable `name` of `cluster` a secret as a whole (`origins` says why; `own`: derived from kplay's own secret), or clear it (`undefined`). */
  setVar(cluster: string, name: string, origins: Origins | undefined, own = false): void {
    let m = this.vars.get(cluster);
    if (!origins) {
      m?.delete(name);
      return;
    }
    if (!m) this.vars.set(cluster, (m = new Map()));
    m.set(name, { origins, own });
  }

  /** Why variable `name` of `cluster` is a secret as a whole; undefined when it is not. */
  varOrigins(cluster: string, name: string): Origins | undefined {
    return this.vars.get(cluster)?.get(name)?.origins;
  }

  /** Whether variable `name` of `cluster` is a secret as a whole derived from kplay's own secret. */
  varOwn(cluster: string, name: string): boolean {
    return this.vars.get(cluster)?.get(name)?.own === true;
  }

  /**
   * Declare the data of every Kubernetes Secret found in a module's result (`k8s_info` of
   * Secrets, the Secret a `k8s` task applied): each `data` value, its base64-decoded text, and
   * each `stringData` value — but for the keys of a service account token Secret that are public
   * by design (`namespace`: its own namespace's name, `ca.crt`: the cluster's CA certificate).
   */
  addSecretObjects(value: unknown, depth = 0): void {
    if (depth > 12 || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const v of value.slice(0, 5000)) this.addSecretObjects(v, depth + 1);
      return;
    }
    const o = value as Record<string, unknown>;
    if (o.kind === 'Secret' && (isRecord(o.data) || isRecord(o.stringData))) {
      const meta = isRecord(o.metadata) ? o.metadata : {};
      const where = `the data of Secret ${typeof meta.namespace === 'string' ? `${meta.namespace}/` : ''}${typeof meta.name === 'string' ? meta.name : '(unnamed)'}`;
      for (const [k, v] of Object.entries(isRecord(o.data) ? o.data : {})) {
        if (typeof v !== 'string' || publicSecretKey(o, k)) continue;
        this.addValue(v, [where]);
        const plain = Buffer.from(v, 'base64').toString('utf8');
        if (!plain.includes('\ufffd')) this.addValue(plain, [where]);
      }
      for (const v of Object.values(isRecord(o.stringData) ? o.stringData : {})) this.addValue(v, [where]);
      return;
    }
    for (const v of Object.values(o)) this.addSecretObjects(v, depth + 1);
  }
}

