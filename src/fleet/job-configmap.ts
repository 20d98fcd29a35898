/**
 * The bundle as a ConfigMap and the volume items that lay its files out again in the pod.
 * ConfigMap keys cannot hold `/`, so each file gets a flat key (`roles/web/tasks/main.yml` →
 * `roles__web__tasks__main.yml`) and a volume item maps the key back to its path. Text files go
 * in `data`, anything that is not valid UTF-8 in `binaryData`.
 */
import { InputError } from '../load/errors.js';
import type { Bundle, BundleFile } from './job-bundle.js';

/**
 * The apiserver's limit on a ConfigMap: the sum of the values' sizes (`data` as bytes, `binaryData`
 * decoded) must not exceed 1 MiB (keys are not counted). Checked against the sandbox apiserver.
 */
export const CONFIGMAP_MAX_BYTES = 1024 * 1024;

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

/** The biggest files, for the size error. */
function biggest(files: BundleFile[], n: number): string {
  return [...files]
    .sort((a, b) => b.content.length - a.content.length)
    .slice(0, n)
    .map((f) => `${f.path} (${f.content.length} bytes)`)
    .join(', ');
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
  if (bytes > CONFIGMAP_MAX_BYTES) {
    throw new InputError(
      `the playbook directory and inventory come to ${bytes} bytes in ${bundle.files.length} files: more than a ConfigMap holds (${CONFIGMAP_MAX_BYTES} bytes, 1 MiB); the biggest: ${biggest(bundle.files, 5)}`,
      undefined,
      'move what the window does not need out of the playbook directory (hidden entries and node_modules are already left out), or ship the playbook in the image (a kplay image with the playbook directory copied in, or an OCI artifact mounted as an image volume) instead of a ConfigMap',
    );
  }
  return { data, binaryData, items, bytes };
}
