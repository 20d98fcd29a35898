// The `kplay fleet job` command line (the built CLI): flags reach the generator, YAML to stdout or
// -o, usage errors exit 1 with a hint.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kplay, repoRoot } from '../helpers/cli.js';

const example = path.join(repoRoot, 'docs/fleet-job-example');
const base = ['fleet', 'job', path.join(example, 'window.yml'), '-i', path.join(example, 'inventories/stores.yml'), '--fleet-run', 'cli-1'];
let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'fleet-job-cli-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type Obj = Record<string, unknown>;
const get = (o: unknown, ...keys: (string | number)[]): unknown => keys.reduce<unknown>((v, k) => (v as Obj | undefined)?.[k as string], o);

describe('kplay fleet job (CLI)', () => {
  it('writes the objects to stdout with every flag applied', async () => {
    const r = await kplay([...base, '--shards', '4', '--parallelism', '2', '--namespace', 'windows', '--image', 'reg.example/kplay:1', '--kubeconfig-secret', 'stores/config', '--env-secret', 'tokens', '--records-pvc', 'records', '--retries', '1', '--deadline', '3600', '-l', 'store-00[1-3]', '-e', 'release=2026.12', '--check', '-vv']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const docs = parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj);
    expect(docs.map((d) => d.kind)).toEqual(['ConfigMap', 'ConfigMap', 'ConfigMap', 'ServiceAccount', 'Role', 'RoleBinding', 'Job']);
    const job = docs[6];
    expect(get(job, 'metadata', 'namespace')).toBe('windows');
    expect(get(job, 'spec')).toMatchObject({ completions: 4, parallelism: 2, backoffLimitPerIndex: 1, activeDeadlineSeconds: 3600 });
    const c = get(job, 'spec', 'template', 'spec', 'containers', 0) as Obj;
    expect(c.image).toBe('reg.example/kplay:1');
    expect(c.args).toEqual(['run', 'window.yml', '-i', 'inventories/stores.yml', '-e', 'release=2026.12', '--limit', 'store-00[1-3]', '--check', '-vv', '--shard', '$(JOB_COMPLETION_INDEX)/4', '--fleet-run', 'cli-1', '--progress', 'plain']);
    expect(c.env).toEqual(expect.arrayContaining([{ name: 'KUBECONFIG', value: '/kplay/kubeconfig/stores/config' }]));
    expect(c.envFrom).toEqual([{ secretRef: { name: 'tokens' } }]);
    expect(get(job, 'spec', 'template', 'spec', 'volumes')).toEqual(expect.arrayContaining([{ name: 'records', persistentVolumeClaim: { claimName: 'records' } }]));
  });

  it('-o writes the file and says how to apply it', async () => {
    const out = path.join(tmp, 'job.yaml');
    const r = await kplay([...base, '--shards', '2', '--kubeconfig-secret', 'stores', '-o', out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`wrote 7 objects to ${out}: kubectl apply --server-side -f ${out}\n`);
    expect(readFileSync(out, 'utf8')).toContain('kind: Job');
  });

  it('usage errors: no --shards, a non-number, --retries without a records volume, no kubeconfig secret', async () => {
    const noShards = await kplay([...base, '--kubeconfig-secret', 'stores']);
    expect(noShards.code).toBe(1);
    expect(noShards.stderr).toContain('ERROR: --shards is required');
    const bad = await kplay([...base, '--shards', 'ten', '--kubeconfig-secret', 'stores']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("--shards must be a whole number, got 'ten'");
    const retries = await kplay([...base, '--shards', '2', '--retries', '2', '--kubeconfig-secret', 'stores']);
    expect(retries.code).toBe(1);
    expect(retries.stderr).toContain('--retries needs --records-pvc');
    const noKube = await kplay([...base, '--shards', '2']);
    expect(noKube.code).toBe(1);
    expect(noKube.stderr).toContain('connects through the default kubeconfig');
    expect(noKube.stdout).toBe('');
  });
});
