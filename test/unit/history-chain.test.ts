// The audit trail is hash-chained: editing, removing, inserting or reordering a local run record
// makes `kplay history verify` fail (exit 3) naming the record; untouched records verify.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunRecorder, readLocalRecords } from '../../src/audit/record.js';
import { verifyChain } from '../../src/audit/chain.js';
import { emptyStats } from '../../src/report/events.js';
import { kplay } from '../helpers/cli.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-chain-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Write a local record of a run over `clusters`, as `kplay run` does. */
async function record(runId: string, clusters: string[], msg = 'configured'): Promise<string> {
  const rec = new RunRecorder({ run_id: runId, user: 'ops', host: 'h', started: '2026-11-23T10:00:00.000Z', playbook: 'upgrade.yml', inventory: 'inv', tags: [], skip_tags: [], extra_var_names: [], check: false, lock: true });
  for (const c of clusters) rec.onEvent({ type: 'task_result', task: 'deploy', cluster: c, status: 'changed', msg, duration_ms: 5 });
  rec.onEvent({ type: 'recap', clusters: Object.fromEntries(clusters.map((c) => [c, { ...emptyStats(), ok: 1, changed: 1 }])), elapsed_ms: 10, exit_code: 0, interrupted: false });
  return rec.writeLocal(dir);
}

const verify = (): ReturnType<typeof kplay> => kplay(['history', 'verify', '--record-dir', dir]);

describe('local run records are hash-chained per cluster', () => {
  beforeEach(async () => {
    await record('20261123T100000000-aaaaaa', ['c1', 'c2']);
    await record('20261123T100100000-bbbbbb', ['c1']);
    await record('20261123T100200000-cccccc', ['c2']);
    await record('20261123T100300000-dddddd', ['c1', 'c2']);
  });
  const file = (id: string): string => path.join(dir, `${id}.jsonl`);

  it('links each record to the previous one of each of its clusters', async () => {
    const recs = await readLocalRecords(dir);
    expect(recs.map((r) => r.chain)).toEqual([
      { c1: null, c2: null },
      { c1: expect.objectContaining({ run_id: '20261123T100000000-aaaaaa' }) },
      { c2: expect.objectContaining({ run_id: '20261123T100000000-aaaaaa' }) },
      { c1: expect.objectContaining({ run_id: '20261123T100100000-bbbbbb' }), c2: expect.objectContaining({ run_id: '20261123T100200000-cccccc' }) },
    ]);
    expect(recs.every((r) => r.digestOk)).toBe(true);
    const r = await verify();
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('(c1): 3 record(s), chain intact');
    expect(r.stdout).toContain('every record is intact');
  });

  it('an edited record fails, named (digest left as is)', async () => {
    const f = file('20261123T100100000-bbbbbb');
    writeFileSync(f, readFileSync(f, 'utf8').replace('"configured"', '"nothing happened"'));
    const r = await verify();
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/EDITED: local: .*20261123T100100000-bbbbbb\.jsonl: record of run 20261123T100100000-bbbbbb was edited \(its text does not match its digest\)/);
  });

  it('an edited record whose digest was recomputed fails through the next record\'s link', async () => {
    const f = file('20261123T100100000-bbbbbb');
    const lines = readFileSync(f, 'utf8').trim().split('\n').slice(0, -1).map((l) => l.replace('"configured"', '"nothing happened"'));
    const body = `${lines.join('\n')}\n`;
    const { createHash } = await import('node:crypto');
    writeFileSync(f, `${body}${JSON.stringify({ type: 'digest', sha256: createHash('sha256').update(body).digest('hex') })}\n`);
    const r = await verify();
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/EDITED: .*record of run 20261123T100100000-bbbbbb was edited \(run 20261123T100300000-dddddd recorded another hash for it\)/);
  });

  it('a removed record fails, naming the missing run', async () => {
    unlinkSync(file('20261123T100200000-cccccc'));
    const r = await verify();
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/MISSING: local: record of run 20261123T100200000-cccccc of c2 is missing/);
  });

  it('a record moved in the order (renamed to another time) fails', async () => {
    const recs = await readLocalRecords(dir);
    const b = recs[1];
    // pretend run b happened after d: rename the file and its run id
    const moved = (b?.text ?? '').replaceAll('20261123T100100000-bbbbbb', '20261123T100400000-bbbbbb');
    unlinkSync(file('20261123T100100000-bbbbbb'));
    writeFileSync(file('20261123T100400000-bbbbbb'), moved);
    const r = await verify();
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/EDITED|MISSING|REORDERED/);
    expect(r.stdout).toContain('20261123T100400000-bbbbbb');
  });

  it('a record inserted by hand (no link) fails', async () => {
    const d = readFileSync(file('20261123T100300000-dddddd'), 'utf8');
    const forged = d.split('\n').filter((l) => l.trim() && !l.includes('"type":"digest"')).map((l) => l.replaceAll('20261123T100300000-dddddd', '20261123T100350000-eeeeee').replace(/,"chain":\{[^}]*\}[^}]*\}\}/, '')).join('\n');
    writeFileSync(file('20261123T100350000-eeeeee'), `${forged}\n`);
    const r = await verify();
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('20261123T100350000-eeeeee');
  });

  it('records keep their order across renames only through the run id: the files list is not trusted', async () => {
    // renaming a file without touching its content changes nothing (the run id inside is used)
    renameSync(file('20261123T100000000-aaaaaa'), path.join(dir, 'zz-copy.jsonl'));
    expect(readdirSync(dir)).toContain('zz-copy.jsonl');
    const r = await verify();
    expect(r.code, r.stdout).toBe(0);
  });
});

describe('linking a new record', () => {
  it('reads back only to the first record written before chaining (older ones cannot be linked)', async () => {
    // a record of an older kplay: no chain, no digest
    writeFileSync(path.join(dir, '20261123T090000000-oldold.jsonl'), `${JSON.stringify({ type: 'run', run_id: '20261123T090000000-oldold' })}\n${JSON.stringify({ type: 'recap', clusters: { c1: {} } })}\n`);
    await record('20261123T100000000-aaaaaa', ['c2']);
    await record('20261123T100100000-bbbbbb', ['c1', 'c2']);
    const recs = await readLocalRecords(dir);
    const b = recs.find((r) => r.run_id === '20261123T100100000-bbbbbb');
    expect(b?.chain).toEqual({ c1: null, c2: expect.objectContaining({ run_id: '20261123T100000000-aaaaaa' }) });
    const r = await verify();
    expect(r.code, r.stdout).toBe(0);
  });
});

describe('verifyChain', () => {
  it('accepts a chain whose oldest link points at a pruned record (retention)', () => {
    expect(verifyChain('c', [
      { run_id: '2', where: 'x', sha256: 'h2', digestOk: true, prev: { run_id: '1', sha256: 'h1' } },
      { run_id: '3', where: 'x', sha256: 'h3', digestOk: true, prev: { run_id: '2', sha256: 'h2' } },
    ])).toEqual([]);
  });
  it('accepts records of an older kplay (no links) before the first linked one only', () => {
    expect(verifyChain('c', [
      { run_id: '1', where: 'x', sha256: 'h1', digestOk: false, prev: undefined },
      { run_id: '2', where: 'x', sha256: 'h2', digestOk: true, prev: { run_id: '1', sha256: 'h1' } },
    ])).toEqual([]);
    expect(verifyChain('c', [
      { run_id: '2', where: 'x', sha256: 'h2', digestOk: true, prev: null },
      { run_id: '3', where: 'x', sha256: 'h3', digestOk: false, prev: undefined },
    ]).map((p) => p.kind)).toEqual(['unlinked']);
  });
});

describe('records written in lock order, not start order (issue 32 item 3)', () => {
  it('a run that started earlier but wrote later links to the record written before it, and the trail verifies', async () => {
    await record('20261123T100000000-aaaaaa', ['c1']);
    // run ...300 took the cluster's lock first and wrote first; run ...200 started earlier, waited, wrote after it
    await record('20261123T100300000-dddddd', ['c1']);
    await record('20261123T100200000-cccccc', ['c1']);
    await record('20261123T100400000-eeeeee', ['c1']);
    const recs = await readLocalRecords(dir);
    const link = (id: string): string | undefined => recs.find((r) => r.run_id === id)?.chain?.c1?.run_id;
    expect(link('20261123T100300000-dddddd')).toBe('20261123T100000000-aaaaaa');
    expect(link('20261123T100200000-cccccc')).toBe('20261123T100300000-dddddd');
    expect(link('20261123T100400000-eeeeee')).toBe('20261123T100200000-cccccc');
    const r = await verify();
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('(c1): 4 record(s), chain intact');
  });

  it('two records naming the same predecessor (a fork) still fail', () => {
    const problems = verifyChain('c', [
      { run_id: '1', where: 'x', sha256: 'h1', digestOk: true, prev: null },
      { run_id: '2', where: 'x', sha256: 'h2', digestOk: true, prev: { run_id: '1', sha256: 'h1' } },
      { run_id: '3', where: 'x', sha256: 'h3', digestOk: true, prev: { run_id: '1', sha256: 'h1' } },
    ]);
    expect(problems.map((p) => [p.kind, p.run_id])).toEqual([['reordered', '3']]);
  });

  it('the links give the order: a later run id before an earlier one is intact', () => {
    expect(verifyChain('c', [
      { run_id: '1', where: 'x', sha256: 'h1', digestOk: true, prev: null },
      { run_id: '3', where: 'x', sha256: 'h3', digestOk: true, prev: { run_id: '1', sha256: 'h1' } },
      { run_id: '2', where: 'x', sha256: 'h2', digestOk: true, prev: { run_id: '3', sha256: 'h3' } },
    ])).toEqual([]);
  });
});

describe('chain heads (the end of each cluster\'s chain, kept next to the records)', () => {
  const headOf = (c: string): string => path.join(dir, `head-${encodeURIComponent(c)}.json`);
  const dropHeads = (): void => {
    for (const f of readdirSync(dir)) if (f.startsWith('head-')) unlinkSync(path.join(dir, f));
  };
  const link = async (id: string, c: string): Promise<string | null | undefined> => {
    const r = (await readLocalRecords(dir)).find((x) => x.run_id === id)?.chain?.[c];
    return r === null ? null : r?.run_id;
  };

  it('writes a head per cluster naming the last record and its digest', async () => {
    await record('20261123T100000000-aaaaaa', ['c1', 'prod/eu-1']);
    await record('20261123T100100000-bbbbbb', ['c1']);
    const { createHash } = await import('node:crypto');
    const head = (c: string): unknown => JSON.parse(readFileSync(headOf(c), 'utf8'));
    const sha = (id: string): string => createHash('sha256').update(readFileSync(path.join(dir, `${id}.jsonl`))).digest('hex');
    expect(head('c1')).toEqual({ run_id: '20261123T100100000-bbbbbb', sha256: sha('20261123T100100000-bbbbbb') });
    expect(head('prod/eu-1')).toEqual({ run_id: '20261123T100000000-aaaaaa', sha256: sha('20261123T100000000-aaaaaa') });
    const r = await verify();
    expect(r.code, r.stdout + r.stderr).toBe(0);
  });

  it('links from the head without reading the records before it', async () => {
    await record('20261123T100000000-aaaaaa', ['c1']);
    await record('20261123T100100000-bbbbbb', ['c1']);
    // A forged successor of b named before b: a full scan would take it as the end of c1's chain
    // (it follows b); with the head (b), the records named before b are not read.
    writeFileSync(path.join(dir, '20261123T100050000-forged.jsonl'), `${JSON.stringify({ type: 'run', run_id: '20261123T100050000-forged', chain: { c1: { run_id: '20261123T100100000-bbbbbb', sha256: 'x' } } })}\n`);
    await record('20261123T100200000-cccccc', ['c1']);
    expect(await link('20261123T100200000-cccccc', 'c1')).toBe('20261123T100100000-bbbbbb');
    // without heads every record is read again (the forged one now comes before c in the chain order)
    dropHeads();
    await record('20261123T100300000-dddddd', ['c1']);
    expect(await link('20261123T100300000-dddddd', 'c1')).toBe('20261123T100200000-cccccc');
  });

  it('links in write order when runs write in another order than they started (issue 50: a fork)', async () => {
    // four runs that started 1, 2, 3, 4 took the cluster's lock 4, 1, 3, 2: the last one found
    // the head (3) and a record named after it (4) that comes *before* it in the chain, and linked
    // to 4 — which 1 already follows (REORDERED)
    const id = (n: number): string => `20261123T10000${n}000-run${n}00`;
    for (const n of [4, 1, 3, 2]) await record(id(n), ['c1']);
    expect(await link(id(4), 'c1')).toBe(null);
    expect(await link(id(1), 'c1')).toBe(id(4));
    expect(await link(id(3), 'c1')).toBe(id(1));
    expect(await link(id(2), 'c1')).toBe(id(3));
    const r = await verify();
    expect(r.code, r.stdout + r.stderr).toBe(0);
  });

  it('never leaves a record its head does not name (a run stopped between the two writes)', async () => {
    await record('20261123T100000000-aaaaaa', ['c1']);
    // the head cannot be replaced (a directory in its place): the run stops there, before its
    // record — a record the head does not name would be linked past by the next run (a fork
    // when it started earlier than the head's run)
    unlinkSync(headOf('c1'));
    mkdirSync(headOf('c1'));
    await expect(record('20261123T099900000-killed', ['c1'])).rejects.toThrow();
    expect(readdirSync(dir).filter((f) => f.includes('killed'))).toEqual([]);
    rmSync(headOf('c1'), { recursive: true });
    await record('20261123T100100000-bbbbbb', ['c1']);
    expect(await link('20261123T100100000-bbbbbb', 'c1')).toBe('20261123T100000000-aaaaaa');
    const r = await verify();
    expect(r.code, r.stdout + r.stderr).toBe(0);
  });

  it('takes records written after the head that did not move it (started earlier, or written by an older kplay)', async () => {
    await record('20261123T100000000-aaaaaa', ['c1']);
    const saved = readFileSync(headOf('c1'), 'utf8');
    await record('20261123T100100000-bbbbbb', ['c1']);
    writeFileSync(headOf('c1'), saved); // the head still names a
    await record('20261123T100200000-cccccc', ['c1']);
    expect(await link('20261123T100200000-cccccc', 'c1')).toBe('20261123T100100000-bbbbbb');
    const r = await verify();
    expect(r.code, r.stdout + r.stderr).toBe(0);
  });

  it('ignores a head whose record was edited, removed or is another cluster\'s, or that is not JSON', async () => {
    await record('20261123T100000000-aaaaaa', ['c1', 'c2']);
    await record('20261123T100100000-bbbbbb', ['c1']);
    await record('20261123T100150000-ffffff', ['c2']);
    const f = path.join(dir, '20261123T100100000-bbbbbb.jsonl');
    writeFileSync(f, readFileSync(f, 'utf8').replace('"configured"', '"edited"'));
    await record('20261123T100200000-cccccc', ['c1']);
    // the edited record is still the end of c1's chain (verify names the edit): the link says so
    expect(await link('20261123T100200000-cccccc', 'c1')).toBe('20261123T100100000-bbbbbb');
    writeFileSync(headOf('c1'), '{"run_id":"20261123T100150000-ffffff","sha256":"0"}');
    await record('20261123T100300000-dddddd', ['c1']);
    expect(await link('20261123T100300000-dddddd', 'c1')).toBe('20261123T100200000-cccccc');
    writeFileSync(headOf('c1'), 'not json');
    await record('20261123T100400000-eeeeee', ['c1']);
    expect(await link('20261123T100400000-eeeeee', 'c1')).toBe('20261123T100300000-dddddd');
    writeFileSync(headOf('c1'), '{"run_id":"../../etc/passwd","sha256":"0"}');
    unlinkSync(path.join(dir, '20261123T100150000-ffffff.jsonl'));
    await record('20261123T100500000-gggggg', ['c1', 'c2']);
    expect(await link('20261123T100500000-gggggg', 'c1')).toBe('20261123T100400000-eeeeee');
    expect(await link('20261123T100500000-gggggg', 'c2')).toBe('20261123T100000000-aaaaaa');
  });
});
