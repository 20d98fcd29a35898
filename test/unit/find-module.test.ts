// ansible.builtin.find under connection local: the matches ansible-playbook gives on the same
// tree (patterns as globs or regexes, recurse/depth, hidden, contains, excludes, file_type, a path
// that is not a directory), asserted here as it printed them.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import find from '../../modules/find.js';
import type { ModuleResult } from '../../src/core/module.js';
import { runModule } from '../helpers/ctx.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'kplay-find-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
mkdirSync(path.join(root, 'a/b'), { recursive: true });
mkdirSync(path.join(root, '.hid'));
for (const [f, text] of [['x.yml', 'kind: ConfigMap'], ['y.yaml', 'kind: Secret'], ['z.txt', 'n'], ['a/p.yml', 'kind: Pod'], ['a/b/s.yml', 'kind: Svc'], ['.h.yml', 'h'], ['.hid/i.yml', 'i']] as const) writeFileSync(path.join(root, f), `${text}\n`);
symlinkSync('x.yml', path.join(root, 'l.yml'));

function paths(r: ModuleResult): string[] {
  const files = ('data' in r && r.data ? (r.data.files as { path: string }[]) : []).map((f) => path.relative(root, f.path));
  return files.sort();
}

describe('find', () => {
  it('patterns as a comma-separated string; symlinks are not files; examined counts every entry', async () => {
    const r = await runModule(find, { paths: root, patterns: '*.yml,*.yaml' });
    expect(r.status).toBe('ok');
    expect(paths(r)).toEqual(['x.yml', 'y.yaml']);
    expect(r).toMatchObject({ data: { matched: 2, examined: 7, msg: 'All paths examined', skipped_paths: {} } });
  });

  it('recurse walks hidden directories but skips hidden names; depth limits the levels', async () => {
    expect(paths(await runModule(find, { paths: root, patterns: '*.yml', recurse: true }))).toEqual(['.hid/i.yml', 'a/b/s.yml', 'a/p.yml', 'x.yml']);
    expect(paths(await runModule(find, { paths: root, patterns: '*.yml', recurse: true, depth: 2, hidden: true }))).toEqual(['.h.yml', '.hid/i.yml', 'a/p.yml', 'x.yml']);
  });

  it('contains, excludes with file_type any, regex patterns, a path that is not a directory', async () => {
    expect(paths(await runModule(find, { paths: root, recurse: true, contains: 'kind: (Pod|Svc)' }))).toEqual(['a/b/s.yml', 'a/p.yml']);
    expect(paths(await runModule(find, { paths: root, file_type: 'any', excludes: '*.yml' }))).toEqual(['a', 'y.yaml', 'z.txt']);
    const nope = path.join(root, 'nope');
    const r = await runModule(find, { paths: [root, nope], patterns: '^[xy]\\.', use_regex: true });
    expect(paths(r)).toEqual(['x.yml', 'y.yaml']);
    expect(r).toMatchObject({ data: { matched: 2, skipped_paths: { [nope]: `'${nope}' is not a directory` } } });
  });

  it('each match carries stat fields; get_checksum adds the sha1', async () => {
    const r = await runModule(find, { paths: root, patterns: 'x.yml', get_checksum: true });
    const f = ('data' in r && r.data ? (r.data.files as Record<string, unknown>[]) : [])[0];
    expect(f).toMatchObject({ path: path.join(root, 'x.yml'), isreg: true, isdir: false, islnk: false, size: 16, checksum: expect.stringMatching(/^[0-9a-f]{40}$/) });
  });
});
