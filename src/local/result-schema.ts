/**
 * Registered fields every module that leaves a file behind reports about it, as ansible-core's
 * file-handling modules do (`copy`, `template`, `get_url`, `tempfile`, `file`): one declaration,
 * spread into each module's `result`.
 */
import { Type } from '../core/args.js';

/** `mode`, `uid`, `gid`, `owner`, `group`, `size` of the path (absent when nothing is there). */
export const PathAttrsResult = {
  mode: Type.Optional(Type.String({ description: 'Permissions in octal (`0644`).' })),
  uid: Type.Optional(Type.Integer({ description: 'Owner id.' })),
  gid: Type.Optional(Type.Integer({ description: 'Group id.' })),
  owner: Type.Optional(Type.String({ description: 'Owner name.' })),
  group: Type.Optional(Type.String({ description: 'Group name.' })),
  size: Type.Optional(Type.Integer({ description: 'Size in bytes.' })),
};
