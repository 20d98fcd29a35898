// Real-world manifest shapes at the parsing boundary (k8s_apply files and helm's rendered output):
// null and empty fields, empty and comment-only documents, List kinds; bad shapes are clear
// errors naming the file, document, template and object — never a TypeError.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isHook, parseRendered, withHelmOwnership } from '../../src/helm/manifests.js';
import { dropNulls, parseManifests } from '../../src/k8s/manifests.js';
import { repoRoot } from '../helpers/cli.js';

describe('manifest shapes', () => {
  it('the null-and-empty corpus file parses into its 4 objects (the empty List adds none) with null fields dropped', () => {
    const file = path.join(repoRoot, 'test/fixtures/corpus/manifests/null-and-empty.yaml');
    const objs = parseManifests(readFileSync(file, 'utf8'), 'null-and-empty.yaml');
    expect(objs.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['Deployment/corpus-app', 'Service/corpus-app', 'ConfigMap/corpus-from-list', 'ConfigMap/corpus-from-typed-list']);
    const dep = objs[0];
    expect(dep?.metadata).toEqual({ name: 'corpus-app', labels: { app: 'corpus-app' } });
    expect(JSON.stringify(dep)).not.toContain('null');
    expect(objs[1]?.metadata).toEqual({ name: 'corpus-app' });
  });

  it('helm output with `annotations:` and no value: hooks are found, ownership is added, no TypeError', () => {
    const text = [
      '---',
      '# Source: c/templates/a.yaml',
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      '  name: a',
      '  annotations:',
      '  labels:',
      '---',
      '# Source: c/templates/hook.yaml',
      'apiVersion: batch/v1',
      'kind: Job',
      'metadata:',
      '  name: h',
      '  annotations:',
      '    helm.sh/hook: pre-install',
      'spec: {}',
    ].join('\n');
    const objs = parseRendered(text);
    expect(objs.map((o) => o.metadata.name)).toEqual(['a']);
    expect(parseRendered(text, true).filter(isHook).map((o) => o.metadata.name)).toEqual(['h']);
    const owned = withHelmOwnership(objs[0] ?? { apiVersion: '', kind: '', metadata: {} }, 'rel', 'ns');
    expect(owned.metadata.annotations).toEqual({ 'meta.helm.sh/release-name': 'rel', 'meta.helm.sh/release-namespace': 'ns' });
  });

  it('bad shapes are errors naming the template file and the object', () => {
    const noName = '---\n# Source: mychart/templates/svc.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  labels: {a: b}\n';
    expect(() => parseRendered(noName, false, 'chart ./mychart')).toThrow('chart ./mychart document 1 (mychart/templates/svc.yaml): Service has no metadata.name');
    const badLabel = '---\n# Source: mychart/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  labels:\n    replicas: 3\n';
    expect(() => parseRendered(badLabel, false, 'chart ./mychart')).toThrow(/mychart\/templates\/cm\.yaml\): ConfigMap cm: metadata\.labels\.replicas must be a string, got number 3/);
    expect(() => parseManifests('just text\n', 'x.yaml')).toThrow(/x\.yaml document 1: expected a Kubernetes object .* got the text "just text"/);
    expect(() => parseManifests('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations: [x]\n', 'y.yaml')).toThrow(/metadata\.annotations must be a map of strings, got a list/);
  });

  it('dropNulls keeps list items and falsy values', () => {
    expect(dropNulls({ a: null, b: 0, c: '', d: false, e: [null, { f: null, g: 1 }], h: {} })).toEqual({ b: 0, c: '', d: false, e: [null, { g: 1 }], h: {} });
    // key order kept; a value without nulls is not copied, one with them is (its input untouched)
    const input = { z: 1, a: { x: null, y: [1, { n: null }] }, k: { same: [1, 2] } };
    const out = dropNulls(input) as typeof input;
    expect(Object.keys(out)).toEqual(['z', 'a', 'k']);
    expect(out).toEqual({ z: 1, a: { y: [1, {}] }, k: { same: [1, 2] } });
    expect(out.k).toBe(input.k);
    expect(input.a.x).toBeNull();
    const clean = { a: { b: [1, 'x', { c: true }] } };
    expect(dropNulls(clean)).toBe(clean);
  });
});
