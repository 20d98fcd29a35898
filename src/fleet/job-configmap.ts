/**
 * The bundle as a ConfigMap and the volume items that lay its files out again in the pod.
 * ConfigMap keys cannot hold `/`, so each file gets a flat key (`roles/web/tasks/main.yml` →
 * `roles__web__tasks__main.yml`) and a volume item maps the key back to its path. Text files go
 * in `data`, anything that is not valid UTF-8 in `binaryData`.
 */
import type { Bundle } from './job-bundle.js';
import { CONFIGMAP_MAX_BYTES, tooBigError } from './job-limit.js';

/** A ConfigMap key: `[-._a-zA-Z0-9]+`, at most 253 characters. */
const KEY_MAX = 253;

/** A volume item: which key goes to which path under the mount. */
export interface VolumeItem {
  key: string;
  path: string;
}

/** The ConfigMap's content and the items to mount it. */
export interface BundleData {
  data: Record<string, string>;
  binaryData: Record<string, string>;
  items: VolumeItem[];
  /** Sum of the values' sizes as the apiserver counts them. */
  bytes: number;
}

function isUtf8(b: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(b);
    return true;
  } catch {
    return false;
  }
}

function keyFor(p: string, taken: Set<string>): string {
  let key = p.replace(/\//g, '__').replace(/[^-._a-zA-Z0-9]/g, '_');
  if (key === '.' || key === '..') key = `_${key}`;
  if (key.length > KEY_MAX) key = key.slice(key.length - KEY_MAX);
  if (!taken.has(key)) return key;
  for (let n = 2; ; n++) {
    const k = `${key.slice(0, KEY_MAX - String(n).length - 1)}-${n}`;
    if (!taken.has(k)) return k;
  }
}

/**
 * Turn the bundle into ConfigMap data. Throws InputError when it exceeds the ConfigMap limit.
 */
export function bundleData(bundle: Bundle): BundleData {
  const data: Record<string, string> = {};
  const binaryData: Record<string, string> = {};
  const items: VolumeItem[] = [];
  const taken = new Set<string>();
  let bytes = 0;
  for (const f of bundle.files) {
    const key = keyFor(f.path, taken);
    taken.add(key);
    items.push({ key, path: f.path });
    bytes += f.content.length;
    if (isUtf8(f.content)) data[key] = f.content.toString('utf8');
    else binaryData[key] = f.content.toString('base64');
  }
  if (bytes > CONFIGMAP_MAX_BYTES) throw tooBigError(bundle.files.map((f) => ({ path: f.path, bytes: f.content.length })), bytes, true);
  return { data, binaryData, items, bytes };
}
