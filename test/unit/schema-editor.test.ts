// The editor schema (schemas/playbook.schema.json, what yaml-language-server uses) accepts the
// project's own playbooks and task files, checked with a plain JSON Schema validator as an editor
// would: wherever kplay renders a template and then coerces it, the schema accepts `{{ … }}`.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { repoRoot } from '../helpers/cli.js';

const schema = JSON.parse(readFileSync(path.join(repoRoot, 'schemas/playbook.schema.json'), 'utf8')) as { definitions: Record<string, unknown> };
const ajv = new Ajv({ strict: false, allErrors: true });
const playbook = ajv.compile(schema);
const taskFile = ajv.compile({ type: 'array', items: { $ref: '#/definitions/task' }, definitions: schema.definitions });

const yamlIn = (dir: string): string[] =>
  readdirSync(path.join(repoRoot, dir))
    .filter((f) => f.endsWith('.yml'))
    .map((f) => path.join(dir, f));

const playbooks = [...yamlIn('playbooks'), ...yamlIn('playbooks/examples'), ...yamlIn('test/parity/cases'), 'test/fixtures/helm/release.yml', 'test/fixtures/helm/uninstall.yml'];
const taskFiles = yamlIn('playbooks/tasks');

function errorsOf(validate: typeof playbook): string {
  return (validate.errors ?? []).sort((a, b) => b.instancePath.length - a.instancePath.length).slice(0, 3).map((e) => `${e.instancePath} ${e.message ?? ''}`).join('; ');
}

describe('the editor schema accepts the repository\'s playbooks', () => {
  it.each(playbooks)('%s', (file) => {
    const doc: unknown = YAML.parse(readFileSync(path.join(repoRoot, file), 'utf8'), { merge: true });
    expect(playbook(doc), errorsOf(playbook)).toBe(true);
  });
  it.each(taskFiles)('%s (task file)', (file) => {
    const doc: unknown = YAML.parse(readFileSync(path.join(repoRoot, file), 'utf8'), { merge: true });
    expect(taskFile(doc), errorsOf(taskFile)).toBe(true);
  });
  it('still rejects a wrong literal (a string where an integer is expected, an unknown argument)', () => {
    expect(playbook([{ hosts: 'all', tasks: [{ http_check: { url: 'https://x', retries: 'three' } }] }])).toBe(false);
    expect(playbook([{ hosts: 'all', tasks: [{ http_check: { url: 'https://x', retriez: 3 } }] }])).toBe(false);
    expect(playbook([{ hosts: 'all', tasks: [{ http_check: { url: '{{ endpoint }}/', retries: '{{ n | default: 10 }}' } }] }])).toBe(true);
  });
});

/** The ```yaml examples of a Markdown file: inventories, playbooks and task lists, by shape. */
function markdownExamples(file: string): { name: string; kind: 'inventory' | 'playbook' | 'tasks'; doc: unknown }[] {
  const text = readFileSync(path.join(repoRoot, file), 'utf8');
  const out: { name: string; kind: 'inventory' | 'playbook' | 'tasks'; doc: unknown }[] = [];
  for (const m of text.matchAll(/```ya?ml\n([\s\S]*?)```/g)) {
    const body = m[1] ?? '';
    const line = text.slice(0, m.index).split('\n').length + 1;
    const doc: unknown = YAML.parse(body, { merge: true });
    const first: unknown = Array.isArray(doc) ? doc[0] : undefined;
    // maps are inventories when they have `all:`; other maps (CI workflows, Kubernetes objects, var snippets) are not kplay input
    if (!Array.isArray(doc) && !(typeof doc === 'object' && doc !== null && 'all' in doc)) continue;
    const kind = !Array.isArray(doc) ? 'inventory' : typeof first === 'object' && first !== null && 'hosts' in first ? 'playbook' : 'tasks';
    out.push({ name: `${file}:${line} (${kind})`, kind, doc });
  }
  return out;
}

describe("the editor schemas accept the examples of the README and the module reference", () => {
  const inventory = ajv.compile(JSON.parse(readFileSync(path.join(repoRoot, 'schemas/inventory.schema.json'), 'utf8')) as object);
  const examples = [...markdownExamples('README.md'), ...markdownExamples('docs/modules.md')];
  it('finds the examples (inventories, playbooks and task lists)', () => {
    expect(examples.filter((e) => e.kind === 'playbook').length).toBeGreaterThanOrEqual(3);
    expect(examples.filter((e) => e.kind === 'tasks').length).toBeGreaterThanOrEqual(20);
    expect(examples.filter((e) => e.kind === 'inventory').length).toBeGreaterThanOrEqual(1);
    // the schemas are not permissive: a misspelt key fails in each
    expect(inventory({ all: { clusterz: {} } })).toBe(false);
    expect(taskFile([{ debug: { msg: 'x' }, whne: 'x' }])).toBe(false);
  });
  it.each(examples.map((e) => [e.name, e] as const))('%s', (_name, e) => {
    const validate = e.kind === 'inventory' ? inventory : e.kind === 'playbook' ? playbook : taskFile;
    expect(validate(e.doc), errorsOf(validate)).toBe(true);
  });
});
