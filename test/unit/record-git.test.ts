// The run record names the git commit of the playbook's directory (collected while the playbook
// runs, not before it starts) and whether the directory had uncommitted changes.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { kplay } from '../helpers/cli.js';

const git = (dir: string, ...args: string[]): string => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 'Ops Bot', GIT_AUTHOR_EMAIL: 'ops@example.com', GIT_COMMITTER_NAME: 'Ops Bot', GIT_COMMITTER_EMAIL: 'ops@example.com' } }).trim();

describe('run record: git of the playbook', () => {
  it('records the commit, its author and whether the directory is dirty', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-git-'));
    git(dir, 'init', '-q');
    writeFileSync(path.join(dir, 'site.yml'), '- hosts: all\n  tasks:\n    - debug: { msg: hi }\n');
    writeFileSync(path.join(dir, 'inv.yml'), 'all:\n  clusters:\n    prod-1: {}\n');
    git(dir, 'add', '.');
    git(dir, 'commit', '-q', '-m', 'window');
    const commit = git(dir, 'rev-parse', 'HEAD');
    const header = async (records: string): Promise<Record<string, unknown>> => {
      const r = await kplay(['run', path.join(dir, 'site.yml'), '-i', path.join(dir, 'inv.yml'), '--no-lock'], { cwd: dir, env: { KPLAY_RECORD_DIR: records } });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const file = readdirSync(records).find((f) => f.endsWith('.jsonl'));
      return JSON.parse(readFileSync(path.join(records, file ?? 'none'), 'utf8').split('\n')[0] ?? '{}') as Record<string, unknown>;
    };
    expect((await header(mkdtempSync(path.join(os.tmpdir(), 'kplay-rec-')))).git).toEqual({ commit, author: 'Ops Bot <ops@example.com>', dirty: false });
    writeFileSync(path.join(dir, 'site.yml'), '- hosts: all\n  tasks:\n    - debug: { msg: changed }\n');
    const dirty = await header(mkdtempSync(path.join(os.tmpdir(), 'kplay-rec-')));
    expect(dirty.git).toEqual({ commit, author: 'Ops Bot <ops@example.com>', dirty: true });
    // the header keeps its field order: git right after user and host
    expect(Object.keys(dirty).slice(0, 5)).toEqual(['type', 'run_id', 'user', 'host', 'git']);
  });
});
