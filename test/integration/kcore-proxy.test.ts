// kubernetes.core's proxy, no_proxy and proxy_headers (and HTTPS_PROXY/NO_PROXY of the task's
// environment), differential: the same playbook under ansible-playbook (kubernetes.core, the Python
// client) and under kplay, each through real CONNECT proxies written here (node's http server
// tunnelling to the sandbox apiserver). Compared: each task's status, and which proxy saw which
// tunnel (target, Proxy-Authorization, the user agent tag the task sent).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kplay } from '../helpers/cli.js';
import { sandboxEnv, type SandboxEnv } from '../sandbox/env.js';

const VENV = process.env.KPLAY_BENCH_VENV ?? path.join(os.homedir(), '.cache/kplay-bench/venv');
const ANSIBLE = path.join(VENV, 'bin/ansible-playbook');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'kcore-proxy-'));
let env: SandboxEnv;

/** A CONNECT proxy; `auth`: the Proxy-Authorization it requires (407 without). Records each tunnel. */
class Proxy {
  readonly seen = new Set<string>();
  private readonly server: http.Server;
  port = 0;
  constructor(auth?: string) {
    this.server = http.createServer((_req, res) => res.writeHead(405).end());
    this.server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
      const pa = req.headers['proxy-authorization'];
      const ua = req.headers['user-agent'];
      this.seen.add(`${req.url ?? ''} auth=${pa ?? '-'} tag=${typeof ua === 'string' && ua.startsWith('tag-') ? ua : '-'}`);
      if (auth !== undefined && pa !== auth) {
        client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      const [host, port] = (req.url ?? '').split(/:(?=\d+$)/);
      const upstream = net.connect(Number(port), host ?? '', () => {
        client.write('HTTP/1.1 200 Connection established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
  }
  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }
  clear(): void {
    this.seen.clear();
  }
  close(): void {
    this.server.closeAllConnections();
    this.server.close();
  }
}

const open = new Proxy();
const authed = new Proxy(`Basic ${Buffer.from('u:p').toString('base64')}`);
const viaEnv = new Proxy();
const bypassed = new Proxy();
const proxies = { open, authed, viaEnv, bypassed };

function playbook(hosts: string): string {
  return `- hosts: ${hosts}
  gather_facts: false
  tasks:
    - name: through the proxy
      kubernetes.core.k8s_info: { kind: Namespace, name: default, proxy: "${open.url}", proxy_headers: { user_agent: tag-one } }
      register: r1
    - name: no_proxy bypasses it
      kubernetes.core.k8s_info: { kind: Namespace, name: default, proxy: "${open.url}", no_proxy: "localhost,127.0.0.0/8", proxy_headers: { user_agent: tag-two } }
      register: r2
    - name: with proxy credentials
      kubernetes.core.k8s_info: { kind: Namespace, name: default, proxy: "${authed.url}", proxy_headers: { proxy_basic_auth: "u:p", user_agent: tag-three } }
      register: r3
    - name: without proxy credentials
      kubernetes.core.k8s_info: { kind: Namespace, name: default, proxy: "${authed.url}", proxy_headers: { user_agent: tag-four } }
      register: r4
      ignore_errors: true
    - name: HTTPS_PROXY of the environment
      kubernetes.core.k8s_info: { kind: Namespace, name: default }
      environment: { HTTPS_PROXY: "${viaEnv.url}" }
      register: r5
    - name: NO_PROXY of the environment
      kubernetes.core.k8s_info: { kind: Namespace, name: default }
      environment: { https_proxy: "${bypassed.url}", no_proxy: "127.0.0.1" }
      register: r6
    - name: show
      debug:
        msg: "{{ item.0 }} failed={{ item.1.failed | default(false) }} found={{ item.1.resources | default([]) | length }}"
      loop: "{{ ['r1','r2','r3','r4','r5','r6'] | zip([r1,r2,r3,r4,r5,r6]) | list }}"
      loop_control: { label: "{{ item.0 }}" }
`;
}

/** Environment without the runner's own proxy settings. */
function cleanEnv(): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = { ...process.env };
  for (const k of Object.keys(out)) if (/^(https?|all|no)_proxy$/i.test(k)) delete out[k];
  return out;
}

type Outcome = { statuses: string[]; messages: string[]; seen: Record<string, string[]> };

function observed(): Record<string, string[]> {
  return Object.fromEntries(Object.entries(proxies).map(([k, p]) => [k, [...p.seen].sort()]));
}

function runAnsible(): Promise<Outcome> {
  const file = path.join(tmp, 'ansible.yml');
  writeFileSync(file, playbook('localhost'));
  for (const p of Object.values(proxies)) p.clear();
  const vars = { ansible_python_interpreter: path.join(VENV, 'bin/python') };
  return new Promise((resolve, reject) => {
    execFile(
      ANSIBLE,
      ['-i', 'localhost,', '-c', 'local', '-e', JSON.stringify(vars), file],
      { env: { ...cleanEnv(), K8S_AUTH_KUBECONFIG: env.kubeconfig, K8S_AUTH_CONTEXT: 'sandbox-1', ANSIBLE_STDOUT_CALLBACK: 'json', ANSIBLE_NOCOLOR: '1', ANSIBLE_LOCALHOST_WARNING: 'False' }, maxBuffer: 64 << 20, timeout: 300_000 },
      (err, stdout) => {
        try {
          const doc = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { plays: { tasks: { task: { name: string }; hosts: Record<string, { changed?: boolean; failed?: boolean; results?: { msg?: unknown }[] }> }[] }[] };
          const out: Outcome = { statuses: [], messages: [], seen: observed() };
          for (const t of doc.plays[0]?.tasks ?? []) {
            const r = t.hosts.localhost;
            if (!r) continue;
            if (t.task.name === 'show') out.messages.push(...(r.results ?? []).map((x) => String(x.msg)));
            else out.statuses.push(`${t.task.name}: ${r.failed ? 'failed' : r.changed ? 'changed' : 'ok'}`);
          }
          resolve(out);
        } catch (e) {
          reject(new Error(`ansible-playbook printed no JSON (${err?.message ?? ''}): ${stdout.slice(0, 500)} ${String(e)}`));
        }
      },
    );
  });
}

async function runKplay(): Promise<Outcome & { text: string }> {
  const file = path.join(tmp, 'kplay.yml');
  writeFileSync(file, playbook('sandbox-1'));
  for (const p of Object.values(proxies)) p.clear();
  const r = await kplay(['run', file, '-i', env.inventory, '-o', 'json', '--no-lock'], { env: cleanEnv(), timeoutMs: 200_000 });
  const out: Outcome & { text: string } = { statuses: [], messages: [], seen: observed(), text: r.stdout + r.stderr };
  for (const line of r.stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const e = JSON.parse(line) as { type?: string; task?: string; status?: string; msg?: string; item?: string; loop_summary?: boolean };
    if (e.type !== 'task_result' || e.loop_summary) continue;
    if (e.task === 'show') {
      if (e.item !== undefined) out.messages.push(String(e.msg));
    } else out.statuses.push(`${e.task ?? ''}: ${e.status === 'failed' ? 'failed' : e.status ?? ''}`);
  }
  return out;
}

beforeAll(async () => {
  env = sandboxEnv();
  expect(existsSync(ANSIBLE), `${ANSIBLE} missing: run bash test/bench/install.sh`).toBe(true);
  for (const p of Object.values(proxies)) await p.start();
});

afterAll(() => {
  for (const p of Object.values(proxies)) p.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('kubernetes.core proxy arguments', () => {
  it('kplay tunnels through the same proxies as ansible-playbook, with the same outcome', async () => {
    const ansible = await runAnsible();
    const ours = await runKplay();
    // the reference itself: the proxies were used as the arguments say
    expect(ansible.seen.open).toEqual([expect.stringMatching(/^127\.0\.0\.1:\d+ auth=- tag=tag-one$/)]);
    expect(ansible.seen.viaEnv).toHaveLength(1);
    expect(ansible.seen.bypassed).toEqual([]);
    expect(ansible.statuses).toContain('without proxy credentials: failed');
    expect({ statuses: ours.statuses, messages: ours.messages, seen: ours.seen }, ours.text).toEqual(ansible);
  }, 400_000);
});
