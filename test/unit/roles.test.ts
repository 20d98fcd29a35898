// Roles through the CLI: found in roles/ and as npm packages (kplay-role-*), argument specs
// checked statically (file:line) and at run time, clear errors for a missing role, and role files
// found where Ansible looks for them. Precedence, dependencies, handlers and include/import_role
// are compared with ansible-playbook in test/parity/cases/roles-*.yml.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findFile } from '../../src/executor/module-context.js';
import { kplay, repoRoot } from '../helpers/cli.js';

const site = path.join(repoRoot, 'test/fixtures/roles/site');
const run = (playbook: string, extra: string[] = []): ReturnType<typeof kplay> => kplay(['run', playbook, '-i', 'inventory.yml', '--no-lock', ...extra], { cwd: site });

describe('roles', () => {
  it('runs a role from roles/ and one installed as an npm package kplay-role-*, with defaults, params and role_path', async () => {
    const r = await run('ok.yml');
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toContain(`TASK [app : Validating arguments against arg spec 'main' - an app]`);
    expect(r.stdout).toContain(`ok: [c1] => app shop replicas=2 file=${path.join(site, 'roles/app')}`);
    expect(r.stdout).toContain('TASK [greet : show greet]');
    expect(r.stdout).toContain('ok: [c1] => hello, c1');
  });

  it('kplay validate refuses a literal role argument of the wrong type, at its file:line', async () => {
    const r = await kplay(['validate', 'bad-type.yml', '-i', 'inventory.yml'], { cwd: site });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${path.join(site, 'bad-type.yml')}:5:7`);
    expect(r.stderr).toContain("role app: invalid arguments: argument 'replicas' is of type str and we were unable to convert to int");
  });

  it('a required argument missing at run time fails the validation task, before the role runs', async () => {
    const r = await run('missing.yml');
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('missing required arguments: app_name');
    expect(r.stdout).not.toContain('TASK [app : show app]');
  });

  it('a missing role is a clear error naming where kplay looked and how to install it', async () => {
    const r = await kplay(['validate', 'unknown.yml', '-i', 'inventory.yml'], { cwd: site });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${path.join(site, 'unknown.yml')}:3:7`);
    expect(r.stderr).toContain("role 'nope' not found");
    expect(r.stderr).toContain(path.join(site, 'roles/nope'));
    expect(r.stderr).toContain('npm install kplay-role-nope');
  });

  it('!secret values in role files and task files (loaded when the playbook loads or at run time) are masked', async () => {
    const r = await run('secrets.yml', ['-vv']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toContain('ok: [c1] => token ********');
    expect(r.stdout.match(/ok: \[c1\] => \*{8}/g)).toHaveLength(2);
    expect(r.stdout + r.stderr).not.toMatch(/role-canary-6f1e|taskfile-canary-93ab/);
  });

  it("a role's task finds src files in files/ and templates in templates/, as Ansible does", () => {
    const role = path.join(site, 'roles/app');
    const tasks = path.join(role, 'tasks');
    expect(findFile('cm.yaml', 'files', {}, { baseDir: tasks, roleDir: role })).toBe(path.join(role, 'files/cm.yaml'));
    expect(findFile('files/cm.yaml', 'files', {}, { baseDir: tasks, roleDir: role })).toBe(path.join(role, 'files/cm.yaml'));
    expect(findFile('*.yaml', 'files', {}, { baseDir: tasks, roleDir: role })).toBe(path.join(role, 'files/*.yaml'));
    expect(findFile('missing.yaml', 'templates', {}, { baseDir: tasks, roleDir: role })).toBe(path.join(tasks, 'missing.yaml'));
    expect(findFile('x.yaml', 'files', {}, { baseDir: site })).toBe(path.join(site, 'x.yaml'));
  });
});
