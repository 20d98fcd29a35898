// Values derived from secrets (through filters, set_fact, inside longer strings, in a command's
// output and error) are masked in every channel — text, -vv, JSON events and the local run record —
// while what carries no secret (`{{ token | size }}`, booleans) is still shown.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kplay, repoRoot } from '../helpers/cli.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-derived-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const TOKEN = 'tok-Canary-7f3a9b';
const PASSWORD = 'pw-Canary-91c2e4';
// Every form a derived value takes in this playbook.
const FORMS = [TOKEN, TOKEN.toUpperCase(), TOKEN.toLowerCase(), PASSWORD.split('').join('-'), `x${TOKEN.toLowerCase()}-z`, `X${TOKEN.toUpperCase()}-Z`, Buffer.from(TOKEN).toString('base64')];

describe('derived secrets', () => {
  it('are masked in text, -vv, JSON events and run records; non-secret results stay visible', async () => {
    const pb = path.join(tmp, 'derived.yml');
    writeFileSync(pb, [
      '- hosts: all',
      '  vars:',
      `    api_token: "${TOKEN}"`,
      `    db: { password: "${PASSWORD}" }`,
      '  tasks:',
      '    - debug: { msg: "upper {{ api_token | upcase }}" }',
      "    - debug: { msg: \"split {{ db.password | split: '' | join: '-' }}\" }",
      "    - set_fact: { derived: \"x{{ api_token | downcase | append: '-z' }}\" }",
      '    - debug: { msg: "fact {{ derived }} and {{ derived | upcase }}" }',
      '    - debug: { msg: "b64 {{ api_token | b64encode }}" }',
      '    - debug: { msg: "size {{ api_token | size }} defined {{ api_token is defined }}" }',
      '    - command: { argv: [sh, -c, "echo {{ api_token | upcase }} >&2; exit 3"] }',
      '      ignore_errors: true',
    ].join('\n'));
    const inv = path.join(repoRoot, 'playbooks/examples/inventories/demo.yml');
    const records = path.join(tmp, 'records');
    const text = await kplay(['run', pb, '-i', inv, '--limit', 'prod-eu-1', '-vv', '--record-dir', records]);
    const json = await kplay(['run', pb, '-i', inv, '--limit', 'prod-eu-1', '-o', 'json', '--record-dir', records]);
    expect(text.code, text.stdout).toBe(0);
    expect(json.code).toBe(0);
    const recordText = readdirSync(records).map((f) => readFileSync(path.join(records, f), 'utf8')).join('\n');
    for (const [channel, out] of [['text -vv', text.stdout + text.stderr], ['json', json.stdout + json.stderr], ['run record', recordText]] as const) {
      for (const form of FORMS) expect(out.includes(form), `${channel} shows ${form}`).toBe(false);
    }
    expect(text.stdout).toContain('upper ********');
    expect(text.stdout).toContain('size 17 defined True'); // no secret in it: shown as is
  });
});
