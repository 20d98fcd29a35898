// kubernetes.core's update (src/k8s/kcore-action.ts writeIfChanged): `changed` only when the dry-run
// of the patch differs from the object as it is now — an object a controller changed between the
// read and the dry-run (a new Deployment's revision annotation) is read again, not reported changed.
import { describe, expect, it } from 'vitest';
import { writeIfChanged } from '../../src/k8s/kcore-action.js';
import type { KubeObject } from '../../src/k8s/types.js';

const cm = (rv: string, data: Record<string, string>, annotations?: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'n', resourceVersion: rv, ...(annotations ? { annotations } : {}) }, data }) as KubeObject;
const diffOf = (): { label: string; before: string; after: string } => ({ label: 'x', before: '', after: '' });
const show = (o: KubeObject): Record<string, unknown> => ({ ...o }) as Record<string, unknown>;

function writer(dryAnswer: KubeObject): { write: (dryRun: boolean) => Promise<KubeObject>; writes: boolean[] } {
  const writes: boolean[] = [];
  return { writes, write: (dryRun) => (writes.push(dryRun), Promise.resolve(dryAnswer)) };
}

describe('writeIfChanged', () => {
  it('reads the object again when the dry-run answers with a newer resourceVersion, and writes nothing when that is the same', async () => {
    const now = cm('2', { a: '1' }, { 'deployment.kubernetes.io/revision': '1' });
    const w = writer(now);
    let reads = 0;
    const r = await writeIfChanged('update', cm('1', { a: '1' }), w.write, { checkMode: false }, show, diffOf, 'Failed', undefined, () => (reads++, Promise.resolve(now)));
    expect(r.changed).toBe(false);
    expect(reads).toBe(1);
    expect(w.writes).toEqual([true]);
    expect((r.result as { metadata: { resourceVersion: string } }).metadata.resourceVersion).toBe('2');
  });

  it('still reports a real change after reading again, and writes it', async () => {
    const w = writer(cm('2', { a: '2' }));
    const r = await writeIfChanged('update', cm('1', { a: '1' }), w.write, { checkMode: false }, show, diffOf, 'Failed', undefined, () => Promise.resolve(cm('2', { a: '1' })));
    expect(r.changed).toBe(true);
    expect(w.writes).toEqual([true, false]);
  });

  it('does not read again when the resourceVersion is the one read (a change of the task itself)', async () => {
    const w = writer(cm('1', { a: '2' }));
    let reads = 0;
    const r = await writeIfChanged('update', cm('1', { a: '1' }), w.write, { checkMode: true }, show, diffOf, 'Failed', undefined, () => (reads++, Promise.resolve(undefined)));
    expect(r.changed).toBe(true);
    expect(reads).toBe(0);
    expect(w.writes).toEqual([true]);
  });
});
