/**
 * Field ownership from `metadata.managedFields`: which fields of a live object other field
 * managers set that kplay (or helm, for releases) did not apply — additions such as a
 * `kubectl set env` variable or a `kubectl label` — and who owns a given field now. The
 * server keeps these records for every write, so no state of kplay's own is needed.
 */
import { isRecord } from '../core/shape.js';
/** The part of a Kubernetes object this file reads (kept structural: `types.ts` imports this file's types). */
export interface ManagedObject {
  metadata: { [key: string]: unknown };
}


/** One step of a field path: a map key, a list item by key fields, a set value or a list index. */
export type FieldSegment = { field: string } | { key: Record<string, unknown> } | { value: unknown } | { index: number };

/** One entry of `metadata.managedFields`. */
export interface ManagedEntry {
  manager: string;
  operation: string;
  /** When the manager last wrote (absent on some subresource writes). */
  time?: string;
  subresource?: string;
  fieldsV1: Record<string, unknown>;
}

/** A field another manager set on a live object, which the object's own managers never applied. */
export interface FieldAddition {
  /** Display path, e.g. `.spec.template.spec.containers[name=web].env[name=FOO]`. */
  path: string;
  segments: FieldSegment[];
  /** The field manager that set it (`kubectl-set`, `kubectl-label`, …). */
  manager: string;
  operation: string;
  time?: string;
}

/** Who owns a field now. */
export interface FieldOwner {
  manager: string;
  operation: string;
  time?: string;
  subresource?: string;
}

/** The managedFields entries of an object (malformed entries are skipped). */
export function managedEntries(obj: ManagedObject | undefined): ManagedEntry[] {
  const raw = obj?.metadata.managedFields;
  if (!Array.isArray(raw)) return [];
  const out: ManagedEntry[] = [];
  for (const e of raw) {
    if (!isRecord(e) || typeof e.manager !== 'string' || !isRecord(e.fieldsV1)) continue;
    out.push({
      manager: e.manager,
      operation: typeof e.operation === 'string' ? e.operation : '',
      time: typeof e.time === 'string' ? e.time : undefined,
      subresource: typeof e.subresource === 'string' && e.subresource !== '' ? e.subresource : undefined,
      fieldsV1: e.fieldsV1,
    });
  }
  return out;
}

const SIMPLE_KEY = /^[A-Za-z_][\w-]*$/;

/** Display form of a path: `.metadata.labels.team`, `.metadata.annotations["a.b/c"]`, `.env[name=FOO]`, `[0]`. */
export function formatPath(segments: FieldSegment[]): string {
  let out = '';
  for (const s of segments) {
    if ('field' in s) out += SIMPLE_KEY.test(s.field) ? `.${s.field}` : `[${JSON.stringify(s.field)}]`;
    else if ('key' in s) out += `[${Object.entries(s.key).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(',')}]`;
    else if ('value' in s) out += `[=${JSON.stringify(s.value)}]`;
    else out += `[${s.index}]`;
  }
  return out;
}

/** The segment a fieldsV1 key stands for (`f:name`, `k:{...}`, `v:...`, `i:N`), or undefined for `.` and unknown keys. */
function segmentOf(key: string): FieldSegment | undefined {
  try {
    if (key.startsWith('f:')) return { field: key.slice(2) };
    if (key.startsWith('k:')) {
      const k: unknown = JSON.parse(key.slice(2));
      return isRecord(k) ? { key: k } : undefined;
    }
    if (key.startsWith('v:')) return { value: JSON.parse(key.slice(2)) as unknown };
    if (key.startsWith('i:')) return { index: Number(key.slice(2)) };
  } catch {
    return undefined;
  }
  return undefined;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Index of the item a list segment names in `list`, or -1. */
function indexIn(list: unknown[], seg: FieldSegment): number {
  if ('key' in seg) return list.findIndex((it) => isRecord(it) && Object.entries(seg.key).every(([k, v]) => same(it[k], v)));
  if ('value' in seg) return list.findIndex((it) => same(it, seg.value));
  if ('index' in seg) return Number.isInteger(seg.index) && seg.index >= 0 && seg.index < list.length ? seg.index : -1;
  return -1;
}

/** The child of `node` a segment names, and its JSON-pointer token; undefined when absent. */
export function childAt(node: unknown, seg: FieldSegment): { value: unknown; token: string } | undefined {
  if ('field' in seg) {
    if (!isRecord(node) || !Object.prototype.hasOwnProperty.call(node, seg.field) || node[seg.field] === undefined) return undefined;
    return { value: node[seg.field], token: seg.field };
  }
  if (!Array.isArray(node)) return undefined;
  const i = indexIn(node, seg);
  return i < 0 ? undefined : { value: node[i], token: String(i) };
}

/** JSON pointer (RFC 6901) of a path in `obj`, or undefined when the path does not resolve. */
export function pointerOf(obj: unknown, segments: FieldSegment[]): string | undefined {
  let cur: unknown = obj;
  let ptr = '';
  for (const s of segments) {
    const c = childAt(cur, s);
    if (!c) return undefined;
    ptr += `/${c.token.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    cur = c.value;
  }
  return ptr;
}

/** A copy of `obj` without the fields at `paths` (paths that do not resolve are ignored). */
export function withoutFields<T>(obj: T, paths: FieldSegment[][]): T {
  const copy = structuredClone(obj);
  // deepest and highest-index first, so that removing list items keeps the other pointers valid
  const ptrs = paths.map((p) => pointerOf(copy, p)).filter((p): p is string => p !== undefined);
  for (const ptr of sortForRemoval(ptrs)) {
    const tokens = ptr.split('/').slice(1).map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
    let parent: unknown = copy;
    for (const t of tokens.slice(0, -1)) parent = Array.isArray(parent) ? parent[Number(t)] : isRecord(parent) ? parent[t] : undefined;
    const last = tokens[tokens.length - 1] ?? '';
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else if (isRecord(parent)) delete parent[last];
    // a map field left empty goes too, as the API server drops empty fields (`env: []`, `labels: {}`)
    for (let depth = tokens.length - 1; depth > 0; depth--) {
      let node: unknown = copy;
      for (const t of tokens.slice(0, depth - 1)) node = Array.isArray(node) ? node[Number(t)] : isRecord(node) ? node[t] : undefined;
      const key = tokens[depth - 1] ?? '';
      if (!isRecord(node)) break;
      const child = node[key];
      const empty = (Array.isArray(child) && child.length === 0) || (isRecord(child) && Object.keys(child).length === 0);
      if (!empty) break;
      delete node[key];
    }
  }
  return copy;
}

/** JSON pointers ordered so that each removal leaves the later ones valid (list items: higher index first). */
export function sortForRemoval(ptrs: string[]): string[] {
  const key = (p: string): (string | number)[] => p.split('/').slice(1).map((t) => (/^\d+$/.test(t) ? Number(t) : t));
  return [...new Set(ptrs)].sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
      const x = ka[i];
      const y = kb[i];
      if (x === y) continue;
      if (typeof x === 'number' && typeof y === 'number') return y - x;
      return String(x).localeCompare(String(y));
    }
    return kb.length - ka.length;
  });
}

/**
 * Field managers of kplay itself: `kplay` (k8s_apply, lb_switch's patches) and `kplay-*` (other
 * kplay tasks and community modules). What they wrote is never another task's drift.
 */
export function isKplayManager(manager: string): boolean {
  return /^kplay(-|$)/.test(manager);
}

/** Merge fieldsV1 trees (the union of the fields they own). */
function mergeTrees(trees: Record<string, unknown>[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const t of trees) {
    for (const [k, v] of Object.entries(t)) {
      const prev = out[k];
      out[k] = isRecord(prev) && isRecord(v) ? mergeTrees([prev, v]) : isRecord(v) ? mergeTrees([v]) : {};
    }
  }
  return out;
}

/** Entries that describe the object's spec and metadata (status writes are never drift). */
const bodyEntries = (entries: ManagedEntry[]): ManagedEntry[] => entries.filter((e) => e.subresource !== 'status');

/**
 * Fields of `live` set by a manager other than `ownManagers` (and kplay's own, {@link isKplayManager}) that none of them owns:
 * map keys one by one (`.metadata.labels.x`), list items as a whole (`.env[name=FOO]`). Status
 * and fields no longer on the object are left out. Empty when none of `ownManagers` has ever
 * written the object (nothing to compare with).
 */
export function fieldAdditions(live: ManagedObject | undefined, ownManagers: readonly string[], desired?: object): FieldAddition[] {
  const entries = bodyEntries(managedEntries(live));
  const isOwn = (m: string): boolean => ownManagers.includes(m) || isKplayManager(m);
  const own = entries.filter((e) => isOwn(e.manager));
  if (!live || own.length === 0) return [];
  const ours = mergeTrees(own.map((e) => e.fieldsV1));
  const out: FieldAddition[] = [];
  const seen = new Set<string>();
  for (const e of entries) {
    if (isOwn(e.manager)) continue;
    const report = (segments: FieldSegment[]): void => {
      const path = formatPath(segments);
      if (seen.has(path)) return;
      seen.add(path);
      out.push({ path, segments, manager: e.manager, operation: e.operation, time: e.time });
    };
    const walk = (tree: Record<string, unknown>, oursNode: Record<string, unknown> | undefined, liveNode: unknown, desiredNode: unknown, segs: FieldSegment[]): void => {
      for (const [k, sub] of Object.entries(tree)) {
        if (k === '.') continue;
        const seg = segmentOf(k);
        if (!seg) continue;
        if (segs.length === 0 && 'field' in seg && seg.field === 'status') continue;
        const child = childAt(liveNode, seg);
        if (!child) continue; // no longer on the object
        const path = [...segs, seg];
        const oursChild = oursNode && isRecord(oursNode[k]) ? (oursNode[k] as Record<string, unknown>) : undefined;
        // a field the desired object sets is not an addition (another manager took it over: a changed value)
        const desiredChild = desiredNode === undefined ? undefined : childAt(desiredNode, seg);
        const children = isRecord(sub) ? Object.keys(sub).filter((x) => x !== '.') : [];
        if (oursChild || desiredChild) {
          if (isRecord(sub) && children.length) walk(sub, oursChild, child.value, desiredChild?.value, path);
        } else if ('field' in seg && children.length && isRecord(sub)) {
          // a map or list only this manager wrote: report its keys / items one by one
          walk(sub, undefined, child.value, undefined, path);
        } else report(path);
      }
    };
    walk(e.fieldsV1, ours, live, desired, []);
  }
  return out;
}

/**
 * The managers that own the field at `segments` of `live` (any manager, status writes aside),
 * most recent first. A manager owns a field when its fieldsV1 names it or one of its parents as a whole.
 */
export function ownersOf(live: ManagedObject | undefined, segments: FieldSegment[]): FieldOwner[] {
  const out: FieldOwner[] = [];
  for (const e of bodyEntries(managedEntries(live))) {
    let tree: unknown = e.fieldsV1;
    let liveNode: unknown = live;
    let owns = true;
    for (const seg of segments) {
      if (!isRecord(tree)) {
        owns = false;
        break;
      }
      const child = childAt(liveNode, seg);
      const key = Object.keys(tree).find((k) => {
        const s = segmentOf(k);
        if (!s) return false;
        if ('field' in s && 'field' in seg) return s.field === seg.field;
        if (!Array.isArray(liveNode) || !child || 'field' in s) return false;
        return String(indexIn(liveNode, s)) === child.token;
      });
      if (key === undefined) {
        // an atomic parent (`f:selector: {}`) owns everything below it
        owns = Object.keys(tree).length === 0 && tree !== e.fieldsV1;
        break;
      }
      tree = tree[key];
      liveNode = child?.value;
    }
    if (owns) out.push({ manager: e.manager, operation: e.operation, time: e.time, subresource: e.subresource });
  }
  return out.sort((a, b) => (b.time ?? '').localeCompare(a.time ?? ''));
}

/**
 * Parse a display path from {@link formatPath} or a changed path of the normaliser
 * (`spec.replicas`, `spec.template.spec.containers[0].image`) into segments.
 */
export function parseFieldPath(path: string): FieldSegment[] {
  const out: FieldSegment[] = [];
  const re = /\.?([A-Za-z_$][\w$-]*)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]|\[=([^\]]*)\]|\[([^\]=]+=[^\]]*)\]/gy;
  let m: RegExpExecArray | null;
  while (re.lastIndex < path.length && (m = re.exec(path)) !== null) {
    if (m[1] !== undefined) out.push({ field: m[1] });
    else if (m[2] !== undefined) out.push({ index: Number(m[2]) });
    else if (m[3] !== undefined) out.push({ field: JSON.parse(`"${m[3]}"`) as string });
    else if (m[4] !== undefined) out.push({ value: JSON.parse(m[4]) as unknown });
    else if (m[5] !== undefined) {
      const key: Record<string, unknown> = {};
      for (const part of m[5].split(',')) {
        const eq = part.indexOf('=');
        const v = part.slice(eq + 1);
        key[part.slice(0, eq)] = /^-?\d+$/.test(v) ? Number(v) : v;
      }
      out.push({ key });
    }
  }
  return out;
}
