/**
 * `kplay/sdk`, part 4 — the controller machine: Ansible's semantics for `command`/`shell`, files
 * and their attributes, diffs, HTTP requests, waiting on ports and paths, Python-compatible
 * regular expressions and time, and the facts of the machine.
 */
export { commandResult, runCommand, type CommandArgs, type CommandData } from '../local/command.js';
export { parseFreeForm, shlexSplit, splitArgs } from '../local/kv.js';
export { expandUserVars, findSource, globExists, localPath } from '../local/paths.js';
export { fnmatchRegex } from '../core/fnmatch.js';
export { gatherFacts } from '../executor/facts.js';
export { delta, pyNow, splitLines, type PyTime } from '../local/time.js';
export { applyAttrs, digest, fileState, gidOf, groupName, lexists, octal, pathInfo, sha1File, uidOf, userName, wantedMode, type AttrChange, type ModeArg, type PathInfo, type WantedAttrs } from '../local/files.js';
export { attrDiff, contentDiff } from '../local/diff.js';
export { applyAttrsRecursive } from '../local/tree.js';
export { writeDest, type WriteData, type WriteSpec } from '../local/write.js';
export { httpRequest, maskUrl, secretHeaderValues, type HttpRequest, type HttpResponse } from '../local/http.js';
export { activeConnections, waitLocal, type LocalWaitArgs, type LocalWaitData } from '../local/waitfor.js';
export { pyExpand, pyRegex } from '../local/pyre.js';
export { PathAttrsResult } from '../local/result-schema.js';
