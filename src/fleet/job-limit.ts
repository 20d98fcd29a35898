/** The ConfigMap size limit a bundle must fit in, and the error when it does not. */
import { InputError } from '../load/errors.js';

/**
 * The apiserver's limit on a ConfigMap: the sum of the values' sizes (`data` as bytes, `binaryData`
 * decoded) must not exceed 1 MiB (keys are not counted). Checked against the sandbox apiserver.
 */
export const CONFIGMAP_MAX_BYTES = 1024 * 1024;

/** A file's bundle path and size, for the error. */
export interface SizedFile {
  path: string;
  bytes: number;
}

/** The error for a bundle over the limit: its size (at least `bytes` when gathering stopped early) and the biggest files. */
export function tooBigError(files: readonly SizedFile[], bytes: number, complete: boolean): InputError {
  const biggest = [...files]
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, 5)
    .map((f) => `${f.path} (${f.bytes} bytes)`)
    .join(', ');
  return new InputError(
    `the playbook directory and inventory come to ${complete ? '' : 'at least '}${bytes} bytes in ${complete ? '' : 'the first '}${files.length} files: more than a ConfigMap holds (${CONFIGMAP_MAX_BYTES} bytes, 1 MiB); the biggest: ${biggest}`,
    undefined,
    'move what the window does not need out of the playbook directory (hidden entries and node_modules are already left out), or ship the playbook in the image (a kplay image with the playbook directory copied in, or an OCI artifact mounted as an image volume) instead of a ConfigMap',
  );
}
