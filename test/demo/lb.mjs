// HAProxy in front of the stand-in ingresses: one frontend, one backend `be_webapp` with a
// server per sandbox cluster (named after the cluster), and an admin-level runtime API socket
// that kplay's lb_switch drives. Debian's haproxy package, installed by test/sandbox/install.sh.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/** A free loopback TCP port. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * Start HAProxy.
 * @param {{dir: string, frontendPort: number, adminPort: number, servers: {name: string, port: number}[]}} o
 */
export async function startHaproxy(o) {
  try {
    execFileSync('haproxy', ['-v'], { stdio: 'ignore' });
  } catch {
    throw new Error('haproxy not found on PATH: run `bash test/sandbox/install.sh` (installs Debian haproxy)');
  }
  fs.mkdirSync(o.dir, { recursive: true });
  const cfg = path.join(o.dir, 'haproxy.cfg');
  fs.writeFileSync(
    cfg,
    [
      'global',
      `  stats socket ipv4@127.0.0.1:${o.adminPort} level admin`,
      '  maxconn 1000',
      'defaults',
      '  mode http',
      '  timeout connect 2s',
      '  timeout client 30s',
      '  timeout server 30s',
      'frontend fe_webapp',
      `  bind 127.0.0.1:${o.frontendPort}`,
      '  default_backend be_webapp',
      'backend be_webapp',
      '  balance roundrobin',
      ...o.servers.map((s) => `  server ${s.name} 127.0.0.1:${s.port}`),
      '',
    ].join('\n'),
  );
  const log = fs.openSync(path.join(o.dir, 'haproxy.log'), 'a');
  const child = spawn('haproxy', ['-f', cfg, '-db'], { stdio: ['ignore', log, log] });
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`haproxy exited (${child.exitCode}); see ${path.join(o.dir, 'haproxy.log')}`);
    const up = await new Promise((resolve) => {
      const sock = net.connect(o.adminPort, '127.0.0.1', () => {
        sock.end();
        resolve(true);
      });
      sock.on('error', () => resolve(false));
    });
    if (up) break;
    if (Date.now() > deadline) throw new Error('haproxy did not open its admin socket within 10s');
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    pid: child.pid,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * A client loop through HAProxy: one request every `intervalMs`, counting answers by status.
 * @returns {{stop: () => Promise<{total: number, ok: number, failed: number, failures: string[], versions: Record<string, number>}>}}
 */
export function clientLoop(port, intervalMs = 50) {
  const stats = { total: 0, ok: 0, failed: 0, failures: [], versions: {} };
  let running = true;
  const loop = (async () => {
    while (running) {
      stats.total++;
      try {
        const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(5000) });
        const body = await res.json().catch(() => ({}));
        if (res.status === 200) {
          stats.ok++;
          const key = `${body.cluster}@${body.version}`;
          stats.versions[key] = (stats.versions[key] ?? 0) + 1;
        } else {
          stats.failed++;
          if (stats.failures.length < 20) stats.failures.push(`${res.status} ${JSON.stringify(body).slice(0, 160)}`);
        }
      } catch (e) {
        stats.failed++;
        if (stats.failures.length < 20) stats.failures.push(String(e?.message ?? e));
      }
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return stats;
    },
  };
}

/**
 * A server's admin state in HAProxy (`ready`, `drain` or `maint`), read over the runtime API
 * (`show servers state`; srv_admin_state is a bit field: 0 ready, 0x08 drain, else maintenance).
 * @param {number} adminPort @param {string} server @param {string} [backend]
 * @returns {Promise<'ready' | 'drain' | 'maint'>}
 */
export async function serverState(adminPort, server, backend = 'be_webapp') {
  const text = await new Promise((resolve, reject) => {
    const s = net.connect(adminPort, '127.0.0.1', () => s.end(`show servers state ${backend}\n`));
    let out = '';
    s.on('data', (d) => (out += d.toString()));
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
  const lines = text.trim().split('\n');
  const header = (lines[1] ?? '').replace(/^#\s*/, '').split(/\s+/);
  const row = lines.slice(2).map((l) => l.split(/\s+/)).find((f) => f[header.indexOf('srv_name')] === server);
  if (!row) throw new Error(`no server ${server} in HAProxy backend ${backend}: ${text}`);
  const admin = Number(row[header.indexOf('srv_admin_state')]);
  return admin === 0 ? 'ready' : admin & 0x08 ? 'drain' : 'maint';
}
