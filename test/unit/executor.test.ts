// Executor building blocks: serial batches and lazy variable rendering.
import { describe, expect, it } from 'vitest';
import { makeBatches } from '../../src/executor/playbook-run.js';
import { extendScope, lazyScope } from '../../src/executor/lazyvars.js';
import { templar } from '../../src/template/index.js';

describe('makeBatches', () => {
  const ten = Array.from({ length: 10 }, (_, i) => i);
  it('no serial → one batch', () => expect(makeBatches(ten, undefined)).toEqual([ten]));
  it('a number', () => expect(makeBatches(ten, [4]).map((b) => b.length)).toEqual([4, 4, 2]));
  it('a percentage (at least 1)', () => {
    expect(makeBatches(ten, ['30%']).map((b) => b.length)).toEqual([3, 3, 3, 1]);
    expect(makeBatches([1, 2], ['10%']).map((b) => b.length)).toEqual([1, 1]);
  });
  it('a list: the last size repeats', () => expect(makeBatches(ten, [1, '20%', 5]).map((b) => b.length)).toEqual([1, 2, 5, 2]));
});

describe('lazy variables', () => {
  it('renders templated vars when read, with the same scope', async () => {
    const scope = lazyScope({ name: 'c1', url: 'https://{{ name }}.example', nested: { u: '{{ url }}/x' } });
    expect(await templar.render('{{ nested.u }}', scope)).toBe('https://c1.example/x');
  });
  it('keeps final values (results) unrendered', async () => {
    const scope = lazyScope({ out: { stdout: 'literal {{ not_a_var }}' } }, new Set(['out']));
    expect(await templar.render('{{ out.stdout }}', scope)).toBe('literal {{ not_a_var }}');
  });
  it('reports a self-referencing variable instead of overflowing the stack', async () => {
    const scope = lazyScope({ a: '{{ b }}', b: '{{ a }}' });
    await expect(templar.render('{{ a }}', scope)).rejects.toThrow(/refers to itself/);
  });
  it('extendScope adds data on top without rendering it', async () => {
    const scope = extendScope(lazyScope({ x: '{{ y }}', y: 1 }), { item: '{{ x }}' });
    expect(await templar.render('{{ item }}-{{ x }}', scope)).toBe('{{ x }}-1');
  });
});
