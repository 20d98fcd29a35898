// What kubernetes.core needs of the task's Python interpreter (src/k8s/kcore-validate.ts): its `requires`
// message when a library is missing or too old there, and nothing when it is there. Runs the real `python3`.
import { describe, expect, it } from 'vitest';
import { pythonRequires, taskPython } from '../../src/k8s/kcore-validate.js';

describe('kubernetes.core requires() on the task\'s Python', () => {
  it('is satisfied by a library at or above the minimum', async () => {
    expect(await pythonRequires('python3', 'json', '1.0', 'to test')).toBeUndefined();
  });

  it('fails in kubernetes.core\'s words for a library too old or missing, naming the interpreter and the reason', async () => {
    const old = await pythonRequires('python3', 'json', '99.0', 'to use in-memory config');
    expect(old).toMatch(/^Failed to import the required Python library \(json>=99\.0\) on .+'s Python \S*python\S*\. This is required to use in-memory config\. Please read the module documentation/);
    expect(await pythonRequires('python3', 'no_such_library_kplay', '1.0', 'x')).toMatch(/\(no_such_library_kplay>=1\.0\)/);
  });

  it('an interpreter that cannot run is no failure of its own (kplay needs no Python)', async () => {
    expect(await pythonRequires('/nonexistent/python', 'json', '1.0', 'x')).toBeUndefined();
  });

  it('the interpreter: ansible_python_interpreter, else python3', () => {
    expect(taskPython({ ansible_python_interpreter: '/venv/bin/python' })).toBe('/venv/bin/python');
    expect(taskPython({ ansible_python_interpreter: 'auto_silent' })).toBe('python3');
    expect(taskPython({})).toBe('python3');
  });
});
