// test/helpers/ctx.ts renders with the engine itself (Jinja2 as ansible-core), never with a
// stand-in: module tests must not pass on a broken engine.
import { describe, expect, it } from 'vitest';
import { makeCtx } from '../helpers/ctx.js';
import { templar } from '../../src/template/index.js';

describe('the module test context', () => {
  it('renders Jinja2 that only the engine understands', async () => {
    const ctx = makeCtx({ vars: { items: [1, 2, 3], name: 'web' } });
    expect(await ctx.render("{{ items | sum }}-{{ name ~ '-1' }}")).toBe('6-web-1');
    expect(await ctx.evaluate('items | map("string") | join(",")')).toBe('1,2,3');
    expect(await ctx.evaluate('{"a": items | length}')).toEqual({ a: 3 });
    expect(await ctx.evalCondition('name is match("we") and items | length > 2')).toBe(true);
  });

  it('gives the same answers and errors as the engine', async () => {
    const ctx = makeCtx({ vars: { x: 1 } });
    expect(await ctx.render('{{ x + 1 }}')).toBe(await templar.renderString('{{ x + 1 }}', { x: 1 }));
    await expect(ctx.render('{{ missing }}')).rejects.toThrow(/'missing' is undefined/);
    await expect(ctx.evalCondition('x')).rejects.toThrow(/condition "x" has a int result \(1\)/);
  });
});
