import { describe, expect, it } from 'vitest';
import { pyJson, pyRepr, pyStr } from '../../src/report/python-text.js';
import { ansibleDiff } from '../../src/report/ansible-diff.js';
import { ansibleReporter } from '../../src/report/ansible.js';

describe('values as ansible-core prints them (python-text)', () => {
  it('json.dumps with sort_keys, one line and indented', () => {
    expect(pyJson({ b: 1, a: [1, 'x'], c: {} })).toBe('{"a": [1, "x"], "b": 1, "c": {}}');
    expect(pyJson({ msg: 'A', l: [] }, 4)).toBe('{\n    "l": [],\n    "msg": "A"\n}');
    expect(pyJson({ a: { b: [true, null] } }, 4)).toBe('{\n    "a": {\n        "b": [\n            true,\n            null\n        ]\n    }\n}');
    expect(pyJson('é\n')).toBe('"é\\n"');
  });
  it("str() of a loop item: Python's repr of maps and lists", () => {
    expect(pyStr({ a: 1, b: 'x', c: [true, null] })).toBe("{'a': 1, 'b': 'x', 'c': [True, None]}");
    expect(pyStr('plain')).toBe('plain');
    expect(pyRepr("it's")).toBe('"it\'s"');
    expect(pyRepr('a\tb')).toBe("'a\\tb'");
  });
});

describe('--diff as difflib writes it (ansible-diff)', () => {
  const plain = (l: string): string => l;
  it('one-line ranges without a count, headers as the module set them', () => {
    expect(ansibleDiff({ label: '/f', before: 'hello\n', after: 'hello\nworld\n', ansible: { before: 'hello\n', after: 'hello\nworld\n', before_header: '/f', after_header: '/f' } }, plain)).toBe('--- before: /f\n+++ after: /f\n@@ -1 +1,2 @@\n hello\n+world\n\n');
    expect(ansibleDiff({ label: '/f', before: '', after: 'a\n', ansible: { before: '', after: 'a\n', after_header: '/f' } }, plain)).toBe('--- before\n+++ after: /f\n@@ -0,0 +1 @@\n+a\n\n');
  });
  it('maps serialised as sorted, indented JSON', () => {
    const d = ansibleDiff({ label: '/d', before: '', after: '', ansible: { before: { state: 'absent', path: '/d' }, after: { path: '/d', state: 'directory' } } }, plain);
    expect(d).toBe('--- before\n+++ after\n@@ -1,4 +1,4 @@\n {\n     "path": "/d",\n-    "state": "absent"\n+    "state": "directory"\n }\n\n');
  });
  it('marks a last line without a newline', () => {
    expect(ansibleDiff({ label: 'x', before: 'a', after: 'b' }, plain)).toBe('--- before: x\n+++ after: x\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n\n');
  });
});

describe('-o ansible: NO MORE HOSTS LEFT as the linear strategy prints it', () => {
  const run = (reason: string): string => {
    let out = '';
    const r = ansibleReporter({ write: (s) => (out += s), color: false, verbosity: 0, diff: false, tty: false });
    r.handle({ type: 'play_aborted', play: 'p', reason });
    r.close();
    return out;
  };
  it('after max_fail_percentage (ansible-playbook 2.19 with two hosts, one failing, max_fail_percentage: 10)', () => {
    expect(run('max_fail_percentage 10% exceeded: 1 of 2 cluster(s) in this batch failed')).toBe(`\nNO MORE HOSTS LEFT ${'*'.repeat(61)}\n`);
  });
  it('not for any_errors_fatal nor when every host failed', () => {
    expect(run('any_errors_fatal: a cluster failed')).toBe('');
    expect(run('every cluster of the batch failed')).toBe('');
  });
});
