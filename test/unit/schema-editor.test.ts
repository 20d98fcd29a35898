// The editor schema (schemas/playbook.schema.json, what yaml-language-server uses) accepts the
// project's own playbooks and task files, checked with a plain JSON Schema validator as an editor
// would: wherever kplay renders a template and then coerces it, the schema accepts `{{ … }}`.
import { readdirSync, readFileSync, statSync } from 'node:fs';
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
    // a key given twice is read as ansible-core reads it (the last value wins: test/parity/cases/duplicate-keys.yml)
    const text = readFileSync(path.join(repoRoot, file), 'utf8');
    const doc: unknown = YAML.parse(text, { merge: true, uniqueKeys: false });
    // a case whose arguments are wrong on purpose (they fail when the task runs) says so: an editor flags it
    const wrongOnPurpose = /^# editor-schema: refused\b/m.test(text);
    expect(playbook(doc), wrongOnPurpose ? 'the schema should flag the wrong arguments' : errorsOf(playbook)).toBe(!wrongOnPurpose);
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

describe('the editor schema is written once per piece ($ref), and validates as the inlined one did', () => {
  it('stays small: each module\'s arguments, each task keyword and the template/boolean forms are definitions', () => {
    // 2.3 MB when every piece was inlined where it is used
    expect(statSync(path.join(repoRoot, 'schemas/playbook.schema.json')).size).toBeLessThan(800_000);
    const defs = schema.definitions as Record<string, { properties?: Record<string, unknown> } | undefined>;
    const k8sTask = (defs.task as { anyOf: { properties: Record<string, unknown> }[] }).anyOf.find((t) => 'kubernetes.core.k8s' in t.properties);
    expect(k8sTask?.properties.k8s).toEqual({ $ref: '#/definitions/module.k8s' });
    expect(k8sTask?.properties['kubernetes.core.k8s']).toEqual({ $ref: '#/definitions/module.k8s' });
    expect(k8sTask?.properties.when).toEqual({ $ref: '#/definitions/keyword.when' });
    expect(defs['module.k8s']).toBeDefined();
    expect(defs['keyword.loop_control']?.properties).toHaveProperty('loop_var');
  });
  // Each verdict below is what the 2.3 MB inlined schema gave (checked when the file was rewritten with $ref).
  const play = (tasks: unknown[], extra: Record<string, unknown> = {}): unknown => [{ hosts: 'all', ...extra, tasks }];
  const valid: [string, unknown][] = [
    ['a qualified module name, a YAML 1.1 boolean argument, inherited keywords', play([{ name: 'apply', 'kubernetes.core.k8s': { state: 'present', wait: 'yes', wait_timeout: '{{ t }}', definition: { kind: 'ConfigMap' } }, register: 'out', no_log: 'on', retries: 3 }])],
    ['nested blocks with rescue/always and handlers', play([{ block: [{ block: [{ debug: { msg: 'x' } }], rescue: [{ 'ansible.builtin.fail': { msg: 'y' } }] }], always: [{ meta: 'flush_handlers' }] }], { handlers: [{ name: 'h', debug: 'msg=hi' }] })],
    ['a with_<lookup> loop and loop_control', play([{ debug: { var: 'item' }, with_items: [1, 2], loop_control: { label: '{{ item }}', pause: 1 } }])],
    ['include_tasks, import_role, action:', play([{ include_tasks: 'x.yml', loop: [1] }, { import_role: { name: 'web' } }, { action: 'debug msg=hi' }])],
  ];
  const invalid: [string, unknown][] = [
    ['a boolean argument that is neither a boolean spelling nor a template', play([{ k8s: { state: 'present', wait: 'maybe' } }])],
    ['an integer argument given a word', play([{ k8s: { state: 'present', wait_timeout: 'long' } }])],
    ['two modules in one task', play([{ debug: { msg: 'x' }, fail: { msg: 'y' } }])],
    ['a misspelt keyword in a nested block', play([{ block: [{ block: [{ debug: { msg: 'x' }, whne: 'x' }] }] }])],
    ['an unknown loop_control key', play([{ debug: { msg: 'x' }, loop: [1], loop_control: { loop_vars: 'x' } }])],
    ['a register that is not a variable name', play([{ debug: { msg: 'x' }, register: 'not a name' }])],
  ];
  it.each(valid)('accepts %s', (_name, doc) => {
    expect(playbook(doc), errorsOf(playbook)).toBe(true);
  });
  it.each(invalid)('rejects %s', (_name, doc) => {
    expect(playbook(doc)).toBe(false);
  });
});
