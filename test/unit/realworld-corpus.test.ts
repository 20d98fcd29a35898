// The real-world corpus (test/fixtures/realworld): condensed, shape-preserving copies of public
// Ansible playbooks and roles for Kubernetes (each file's header names what it reproduces). Every
// one must pass `kplay validate` unchanged; the ones built around a module kplay deliberately does
// not run must fail with the exact, clear error naming the module and why, at its file:line:col.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { kplay, repoRoot } from '../helpers/cli.js';

const dir = path.join(repoRoot, 'test/fixtures/realworld');
const inventory = path.join(dir, 'inventory/hosts.yml');

/** Fixtures that must be refused, with the message (file:line:col and reason) kplay gives. */
const REFUSED: Record<string, RegExp> = {
  '11-operator-status.yml': /11-operator-status\.yml:14:7: module 'k8s_status' of collection 'operator_sdk\.util' is not available in kplay/,
  '12-db-restore-exec.yml': /roles\/db_restore\/tasks\/main\.yml:46:7: kubernetes\.core\.k8s_cp is not supported by kplay: it copies files into and out of running containers/,
  '39-docs-helm-pull.yml': /39-docs-helm-pull\.yml:8:7: kubernetes\.core\.helm_pull is not supported by kplay: it downloads a chart archive/,
};

const playbooks = readdirSync(dir).filter((f) => /^\d+-.*\.yml$/.test(f)).sort();

describe('real-world corpus', () => {
  it('has at least 40 playbooks', () => {
    expect(playbooks.length).toBeGreaterThanOrEqual(40);
  });

  it.each(playbooks)('%s', async (file) => {
    const r = await kplay(['validate', path.join(dir, file), '-i', inventory]);
    const refused = REFUSED[file];
    if (refused) {
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(refused);
      expect(r.stderr).toContain('hint:');
    } else {
      expect(r.stderr).toBe('');
      expect(r.stdout).toContain(`${file}: OK`);
      expect(r.code).toBe(0);
    }
  });
});
