// kplay test sandbox: several real Kubernetes control planes on loopback.
//
// One etcd (Debian etcd-server) serves every cluster through its own
// --etcd-prefix; each cluster gets kube-apiserver, kube-controller-manager,
// kube-scheduler (built from k8s.io/kubernetes by install.sh) and kwok, which
// plays the kubelet for one fake Node so pods get scheduled and become Ready.
//
// Plain Node ESM, no build step. Used by sandbox.mjs (CLI) and
// global-setup.ts (vitest). Exports: up({clusters}), down(), status(), plus
// a few path helpers.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

export const K8S_VERSION = 'v1.34.4';
const HERE = path.dirname(fileURLToPath(import.meta.url));
const MAX_CLUSTERS = 20;
// Bump when the way clusters are started changes; a running sandbox started
// with another value still works but is reported as outdated.
// 2: kube-apiserver --watch-cache=false (kwok reacts at once on etcd 3.4),
//    controller-manager --node-monitor-grace-period=1h
// 3: kwok serves pods/exec and pods/log (kwok-stages.yaml) and the apiservers reach it
//    through kubelet-egress.mjs (the egress selector's socket)
export const CONFIG_VERSION = 3;
const NODE_ANNOTATION = 'kwok.x-k8s.io/node';

export function cacheDir() {
  return process.env.KPLAY_SANDBOX_CACHE || path.join(os.homedir(), '.cache', 'kplay-sandbox');
}
export function binDir() {
  return path.join(cacheDir(), K8S_VERSION, 'bin');
}
export function runDir() {
  return process.env.KPLAY_SANDBOX_DIR || path.join(os.homedir(), '.cache', 'kplay-sandbox', 'run');
}
export function statePath() {
  return path.join(runDir(), 'state.json');
}

const REQUIRED_BINS = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok', 'helm', 'kubectl'];

const noop = () => {};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- state

export function readState() {
  try {
    return JSON.parse(fs.readFileSync(statePath(), 'utf8'));
  } catch {
    return null;
  }
}

function writeState(state) {
  const tmp = statePath() + '.tmp';
  fs.writeFileSync(tmp, JSON.stringify(state, null, 2) + '\n');
  fs.renameSync(tmp, statePath());
}

// ---------------------------------------------------------------- processes

function procCmdline(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return null;
  }
}

function procState(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    return /^State:\s+(\S)/m.exec(s)?.[1] ?? null;
  } catch {
    return null;
  }
}

/** True when pid is alive (not a zombie) and still runs the binary we started. */
export function isOurProcess(proc) {
  const cmd = procCmdline(proc.pid);
  if (!cmd || cmd.length === 0 || cmd[0] === '') return false;
  const st = procState(proc.pid);
  if (st === 'Z' || st === 'X') return false;
  return path.basename(cmd[0]) === path.basename(proc.bin);
}

export function rssKiB(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(s);
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

function tail(file, lines = 30) {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return text.split('\n').slice(-lines - 1).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Spawn a long-lived, detached process whose output goes to logFile. */
function startProcess(name, bin, args, logFile, started, env = {}) {
  const fd = fs.openSync(logFile, 'a');
  const child = spawn(bin, args, { detached: true, stdio: ['ignore', fd, fd], env: { ...process.env, ...env } });
  fs.closeSync(fd);
  const proc = { name, bin, pid: child.pid, log: logFile, args };
  if (!child.pid) throw new Error(`failed to start ${name} (${bin})`);
  proc.exited = null;
  child.on('exit', (code, signal) => {
    proc.exited = { code, signal };
  });
  child.on('error', (err) => {
    proc.exited = { code: -1, signal: null, error: String(err) };
  });
  child.unref();
  started.push(proc);
  return proc;
}

function procFailure(proc, why) {
  return new Error(`${proc.name} ${why}\n--- last lines of ${proc.log} ---\n${tail(proc.log)}`);
}

async function killProcesses(procs, log = noop) {
  const mine = procs.filter((p) => p && p.pid && isOurProcess(p));
  for (const p of mine) {
    try {
      process.kill(p.pid, 'SIGTERM');
    } catch {
      /* already gone */
    }
  }
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && mine.some((p) => isOurProcess(p))) await sleep(100);
  for (const p of mine.filter((q) => isOurProcess(q))) {
    log(`  ${p.name} (pid ${p.pid}) ignored SIGTERM, sending SIGKILL`);
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  return mine.length;
}

// ---------------------------------------------------------------- network

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function freePorts(n) {
  const ports = new Set();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

/**
 * Minimal HTTPS/HTTP request helper. tls: {ca, cert, key} (PEM strings) or
 * {insecure: true}. Resolves {status, body}; rejects on connection errors.
 */
function request(url, { method = 'GET', tls = {}, body, timeoutMs = 5000, headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const mod = u.protocol === 'https:' ? https : http;
    const opts = {
      method,
      hostname: u.hostname,
      port: u.port,
      path: u.pathname + u.search,
      headers: { Accept: 'application/json', ...headers },
      timeout: timeoutMs,
    };
    if (u.protocol === 'https:') {
      if (tls.insecure) opts.rejectUnauthorized = false;
      else {
        opts.ca = tls.ca;
        opts.cert = tls.cert;
        opts.key = tls.key;
      }
    }
    let payload;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      opts.headers['Content-Type'] ??= 'application/json';
      opts.headers['Content-Length'] = Buffer.byteLength(payload);
    }
    const req = mod.request(opts, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('timeout', () => req.destroy(new Error(`timeout after ${timeoutMs} ms: ${method} ${url}`)));
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** Poll fn() until it returns a truthy value; fail fast if a watched process died. */
async function waitFor(what, fn, { timeoutMs = 60_000, intervalMs = 200, procs = [] } = {}) {
  const deadline = Date.now() + timeoutMs;
  let lastErr = null;
  for (;;) {
    for (const p of procs) {
      if (p.exited) throw procFailure(p, `exited (${JSON.stringify(p.exited)}) while waiting for ${what}`);
    }
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) {
      const detail = lastErr ? ` (last error: ${lastErr.message ?? lastErr})` : '';
      const err = new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}${detail}`);
      if (procs.length > 0) err.message += '\n' + procs.map((p) => `--- last lines of ${p.log} ---\n${tail(p.log, 20)}`).join('\n');
      throw err;
    }
    await sleep(intervalMs);
  }
}

// ---------------------------------------------------------------- PKI

function openssl(args, cwd) {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    throw new Error(`openssl ${args.join(' ')} failed: ${err.stderr?.toString() ?? err.message}`);
  }
}

function ecKey(file, dir) {
  openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', file], dir);
}

/** Issue a cert signed by ca.crt/ca.key in dir. */
function issueCert(dir, name, subject, ext) {
  ecKey(`${name}.key`, dir);
  openssl(['req', '-new', '-key', `${name}.key`, '-subj', subject, '-out', `${name}.csr`], dir);
  fs.writeFileSync(path.join(dir, `${name}.ext`), ext);
  openssl(
    ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '3650', '-sha256', '-extfile', `${name}.ext`, '-out', `${name}.crt`],
    dir,
  );
  fs.rmSync(path.join(dir, `${name}.csr`));
  fs.rmSync(path.join(dir, `${name}.ext`));
}

const CLIENT_EXT = 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n';

/** Per-cluster PKI: own CA, serving cert, SA key pair and client certs. */
function makePki(dir, serviceIP) {
  fs.mkdirSync(dir, { recursive: true });
  ecKey('ca.key', dir);
  openssl(['req', '-x509', '-new', '-key', 'ca.key', '-subj', '/CN=kplay-sandbox-ca', '-days', '3650', '-sha256', '-out', 'ca.crt',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature'], dir);
  const sans = [
    'DNS:localhost', 'DNS:kubernetes', 'DNS:kubernetes.default', 'DNS:kubernetes.default.svc', 'DNS:kubernetes.default.svc.cluster.local',
    'IP:127.0.0.1', 'IP:10.0.0.1', `IP:${serviceIP}`,
  ];
  issueCert(dir, 'apiserver', '/CN=kube-apiserver',
    `basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=${[...new Set(sans)].join(',')}\n`);
  issueCert(dir, 'admin', '/O=system:masters/CN=kubernetes-admin', CLIENT_EXT);
  issueCert(dir, 'dev-user', '/CN=dev-user', CLIENT_EXT);
  issueCert(dir, 'controller-manager', '/CN=system:kube-controller-manager', CLIENT_EXT);
  issueCert(dir, 'scheduler', '/CN=system:kube-scheduler', CLIENT_EXT);
  // service-account token signing key (RSA: the most widely supported choice)
  openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', 'sa.key'], dir);
  openssl(['pkey', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);
  for (const f of fs.readdirSync(dir)) if (f.endsWith('.key')) fs.chmodSync(path.join(dir, f), 0o600);
}

// ---------------------------------------------------------------- config files

/** Egress of the apiserver to the cluster network: through a unix socket that is never created. */
const EGRESS_SELECTOR = (socket) => `apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
  - name: cluster
    connection:
      proxyProtocol: HTTPConnect
      transport:
        uds:
          udsName: ${socket}
`;

const AUDIT_POLICY = `# kplay sandbox: record every API write (and nothing else) at Metadata level.
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: Metadata
    verbs: ["create", "update", "patch", "delete", "deletecollection"]
  - level: None
`;

const b64 = (file) => fs.readFileSync(file).toString('base64');

function componentKubeconfig(server, pkiDir, certName) {
  return YAML.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'local', cluster: { server, 'certificate-authority': path.join(pkiDir, 'ca.crt') } }],
    users: [{ name: certName, user: { 'client-certificate': path.join(pkiDir, `${certName}.crt`), 'client-key': path.join(pkiDir, `${certName}.key`) } }],
    contexts: [{ name: 'local', context: { cluster: 'local', user: certName } }],
    'current-context': 'local',
  });
}

function sandboxKubeconfig(clusters) {
  const cfg = { apiVersion: 'v1', kind: 'Config', preferences: {}, clusters: [], users: [], contexts: [], 'current-context': clusters[0].context };
  for (const c of clusters) {
    cfg.clusters.push({ name: c.name, cluster: { server: c.server, 'certificate-authority-data': b64(path.join(c.pkiDir, 'ca.crt')) } });
    cfg.users.push({ name: `${c.name}-admin`, user: { 'client-certificate-data': b64(path.join(c.pkiDir, 'admin.crt')), 'client-key-data': b64(path.join(c.pkiDir, 'admin.key')) } });
    cfg.users.push({ name: `${c.name}-dev`, user: { 'client-certificate-data': b64(path.join(c.pkiDir, 'dev-user.crt')), 'client-key-data': b64(path.join(c.pkiDir, 'dev-user.key')) } });
    cfg.contexts.push({ name: c.context, context: { cluster: c.name, user: `${c.name}-admin` } });
    cfg.contexts.push({ name: c.devContext, context: { cluster: c.name, user: `${c.name}-dev` } });
  }
  return YAML.stringify(cfg);
}

function inventoryYaml(clusters, kubeconfig) {
  const entries = {};
  for (const c of clusters) entries[c.name] = { context: c.context, kubeconfig };
  return `# Generated by test/sandbox (kplay sandbox). Do not edit.\n${YAML.stringify({ all: { children: { sandbox: { clusters: entries } } } })}`;
}

function fakeNode(name) {
  const res = { cpu: '128', memory: '512Gi', pods: '500', 'ephemeral-storage': '1Ti' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { [NODE_ANNOTATION]: 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: {
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/os': 'linux',
        'kubernetes.io/hostname': name,
        'node-role.kubernetes.io/agent': '',
        type: 'kwok',
        // kwok answers pods/exec and pods/log for this node (CONFIG_VERSION 3): what the exec fixtures select
        'kplay-sandbox/exec': 'true',
      },
    },
    spec: {},
    status: {
      allocatable: res,
      capacity: res,
      nodeInfo: { architecture: 'amd64', operatingSystem: 'linux', kubeletVersion: `${K8S_VERSION}-kwok`, kubeProxyVersion: 'fake' },
    },
  };
}

// ---------------------------------------------------------------- health

function adminTls(cluster) {
  return {
    ca: fs.readFileSync(path.join(cluster.pkiDir, 'ca.crt')),
    cert: fs.readFileSync(path.join(cluster.pkiDir, 'admin.crt')),
    key: fs.readFileSync(path.join(cluster.pkiDir, 'admin.key')),
  };
}

async function apiGet(cluster, p, tls = adminTls(cluster)) {
  const res = await request(cluster.server + p, { tls });
  return res;
}

async function clusterHealth(cluster) {
  const dead = Object.values(cluster.processes).filter((p) => !isOurProcess(p)).map((p) => p.name);
  let readyz = 'unreachable';
  try {
    const res = await apiGet(cluster, '/readyz', adminTls(cluster));
    readyz = res.status === 200 ? 'ok' : `HTTP ${res.status}`;
  } catch (err) {
    readyz = `unreachable (${err.message})`;
  }
  const rss = Object.values(cluster.processes).reduce((a, p) => a + (isOurProcess(p) ? rssKiB(p.pid) : 0), 0);
  return { name: cluster.name, server: cluster.server, healthy: dead.length === 0 && readyz === 'ok', readyz, deadProcesses: dead, rssMiB: Math.round(rss / 1024) };
}

/**
 * Health of the running sandbox. Returns {running, state, etcd, clusters:[...]};
 * running is true only when every recorded process is alive and every
 * kube-apiserver answers /readyz.
 */
export const OUTDATED =
  'sandbox: WARNING: this sandbox was started by an older version of test/sandbox (e.g. with the apiserver watch cache on, which makes kwok slow); restart it when nobody uses it: npm run sandbox -- down && npm run sandbox -- up';

export async function status() {
  const state = readState();
  if (!state) return { running: false, reason: `no sandbox state at ${statePath()}`, state: null, clusters: [] };
  const etcdAlive = isOurProcess(state.etcd.process);
  const clusters = await Promise.all(state.clusters.map(clusterHealth));
  // coldStartMs is set (and kubeconfig/inventory written) only when `up` finished
  const complete = state.coldStartMs !== null && fs.existsSync(state.kubeconfig) && fs.existsSync(state.inventory);
  const running = complete && etcdAlive && clusters.length > 0 && clusters.every((c) => c.healthy);
  let reason = 'all clusters healthy';
  if (!complete) reason = 'an earlier `up` did not complete';
  else if (!etcdAlive) reason = 'etcd is not running';
  else if (!running) reason = 'some clusters are unhealthy';
  return {
    running,
    reason,
    outdated: (state.configVersion ?? 1) !== CONFIG_VERSION,
    state,
    etcd: { endpoint: state.etcd.endpoint, alive: etcdAlive, rssMiB: Math.round((etcdAlive ? rssKiB(state.etcd.process.pid) : 0) / 1024) },
    clusters,
  };
}

// ---------------------------------------------------------------- lock

async function withLock(fn, log) {
  fs.mkdirSync(runDir(), { recursive: true, mode: 0o700 });
  const lock = path.join(runDir(), 'lock');
  const deadline = Date.now() + 300_000;
  let said = false;
  for (;;) {
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      const holder = Number(fs.readFileSync(lock, 'utf8'));
      let alive = false;
      try {
        process.kill(holder, 0);
        alive = holder !== process.pid;
      } catch {
        alive = false;
      }
      if (!alive) {
        fs.rmSync(lock, { force: true });
        continue;
      }
      if (!said) log(`waiting for another sandbox command (pid ${holder}) to finish...`);
      said = true;
      if (Date.now() > deadline) throw new Error(`sandbox lock ${lock} held by pid ${holder} for too long`);
      await sleep(500);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

// ---------------------------------------------------------------- down

async function downUnlocked(log) {
  const state = readState();
  if (!state) {
    log('sandbox: not running (no state)');
    return { stopped: 0 };
  }
  const procs = [...state.clusters.flatMap((c) => Object.values(c.processes)), ...(state.egress?.process ? [state.egress.process] : []), state.etcd.process];
  const n = await killProcesses(procs, log);
  if (state.etcd.dataDir) fs.rmSync(state.etcd.dataDir, { recursive: true, force: true });
  for (const f of fs.readdirSync(runDir())) {
    if (f === 'lock') continue;
    fs.rmSync(path.join(runDir(), f), { recursive: true, force: true });
  }
  log(`sandbox: stopped ${n} process(es), removed ${runDir()}`);
  return { stopped: n };
}

/** Stop every process recorded in the state (SIGTERM, then SIGKILL) and remove the state. */
export async function down({ log = console.log } = {}) {
  return withLock(() => downUnlocked(log), log);
}

// ---------------------------------------------------------------- up

function checkPrerequisites() {
  const missing = REQUIRED_BINS.filter((b) => !fs.existsSync(path.join(binDir(), b)));
  const problems = [];
  if (missing.length) problems.push(`missing binaries in ${binDir()}: ${missing.join(', ')}`);
  for (const tool of ['etcd', 'openssl']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      problems.push(`${tool} not found on PATH`);
    }
  }
  if (problems.length) throw new Error(`sandbox prerequisites missing:\n  ${problems.join('\n  ')}\nRun: bash test/sandbox/install.sh  (as root on Debian)`);
}

function summarize(st) {
  return {
    kubeconfig: st.kubeconfig,
    inventory: st.inventory,
    statePath: statePath(),
    binDir: st.binDir,
    clusters: st.clusters.map((c) => c.name),
  };
}

/**
 * Start the sandbox with `clusters` clusters (default 3). Idempotent: a
 * healthy sandbox with the same cluster count is reused; stale state is
 * cleaned up first. Resolves {reused, state, kubeconfig, inventory, statePath, binDir, ...}.
 */
export async function up({ clusters = 3, log = console.log } = {}) {
  const count = Number(clusters);
  if (!Number.isInteger(count) || count < 1 || count > MAX_CLUSTERS) throw new Error(`--clusters must be an integer between 1 and ${MAX_CLUSTERS}`);
  return withLock(async () => {
    const existing = readState();
    if (existing) {
      const st = await status();
      if (st.running && existing.clusters.length === count) {
        log(`sandbox: already running with ${count} cluster(s), healthy`);
        if (st.outdated) log(OUTDATED);
        return { reused: true, state: existing, ...summarize(existing) };
      }
      if (st.running) {
        throw new Error(`sandbox already running with ${existing.clusters.length} cluster(s), not ${count}; run \`npm run sandbox -- down\` first`);
      }
      log(`sandbox: found stale state (${st.reason}); cleaning up`);
      await downUnlocked(log);
    }
    checkPrerequisites();
    const started = [];
    try {
      const state = await startAll(count, started, log);
      return { reused: false, state, ...summarize(state) };
    } catch (err) {
      log('sandbox: start failed, stopping what was started');
      await killProcesses(started, noop);
      throw err;
    }
  }, log);
}

async function startAll(count, started, log) {
  const t0 = Date.now();
  const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(1)}s`;
  const dir = runDir();
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const bin = binDir();
  const logsDir = path.join(dir, 'logs');
  fs.mkdirSync(logsDir, { recursive: true });

  // ports: etcd client + peer, then per cluster apiserver, kcm, scheduler, kwok
  const ports = await freePorts(2 + 4 * count);
  const etcdPort = ports[0];
  const etcdPeer = ports[1];
  const etcdEndpoint = `http://127.0.0.1:${etcdPort}`;
  const etcdDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kplay-sandbox-etcd-'));

  // state file is written early so that `down` can clean up a half-started sandbox
  const state = {
    version: 1,
    configVersion: CONFIG_VERSION,
    kubernetesVersion: K8S_VERSION,
    createdAt: new Date().toISOString(),
    runDir: dir,
    binDir: bin,
    kubeconfig: path.join(dir, 'kubeconfig'),
    inventory: path.join(dir, 'inventory.yaml'),
    pids: [],
    etcd: { endpoint: etcdEndpoint, dataDir: etcdDataDir, process: null },
    clusters: [],
    coldStartMs: null,
  };
  const save = () => {
    state.pids = started.map((p) => p.pid);
    writeState(state);
  };

  log(`sandbox: starting etcd on ${etcdEndpoint}`);
  const etcdProc = startProcess('etcd', 'etcd', [
    '--name=sandbox',
    `--data-dir=${etcdDataDir}`,
    `--listen-client-urls=${etcdEndpoint}`,
    `--advertise-client-urls=${etcdEndpoint}`,
    `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
    `--initial-cluster=sandbox=http://127.0.0.1:${etcdPeer}`,
    '--unsafe-no-fsync',
    '--quota-backend-bytes=8589934592',
    '--snapshot-count=100000',
    '--log-level=warn',
  ], path.join(logsDir, 'etcd.log'), started);
  state.etcd.process = strip(etcdProc);
  save();

  // PKI + config while etcd starts
  const auditPolicy = path.join(dir, 'audit-policy.yaml');
  fs.writeFileSync(auditPolicy, AUDIT_POLICY);
  // Nothing the apiserver proxies to "the cluster network" (admission webhooks, aggregated
  // APIServices, service/pod proxy, kubelet logs/exec) may leave this machine: the sandbox's
  // service and pod IPs are fake private addresses. Route that egress through an HTTP CONNECT
  // proxy on a unix socket that never exists, so every such call fails locally, at once.
  const egressConfig = path.join(dir, 'egress-selector.yaml');
  const egressSocket = path.join(dir, 'no-cluster-egress.sock');
  fs.writeFileSync(egressConfig, EGRESS_SELECTOR(egressSocket));
  // kwok's configuration with the absolute path of the pods' log (ClusterLogs)
  const stagesFile = path.join(dir, 'kwok-stages.yaml');
  fs.writeFileSync(stagesFile, fs.readFileSync(path.join(HERE, 'kwok-stages.yaml'), 'utf8').replaceAll('@POD_LOG@', path.join(HERE, 'pod-log.cri')));
  const clusters = [];
  for (let i = 1; i <= count; i++) {
    const name = `sandbox-${i}`;
    const cdir = path.join(dir, name);
    const pkiDir = path.join(cdir, 'pki');
    const [apiPort, kcmPort, schedPort, kwokPort] = ports.slice(2 + 4 * (i - 1), 6 + 4 * (i - 1));
    const serviceCIDR = `10.0.${i - 1}.0/24`;
    const serviceIP = `10.0.${i - 1}.1`;
    makePki(pkiDir, serviceIP);
    const server = `https://127.0.0.1:${apiPort}`;
    fs.writeFileSync(path.join(cdir, 'controller-manager.kubeconfig'), componentKubeconfig(server, pkiDir, 'controller-manager'));
    fs.writeFileSync(path.join(cdir, 'scheduler.kubeconfig'), componentKubeconfig(server, pkiDir, 'scheduler'));
    fs.writeFileSync(path.join(cdir, 'kwok.kubeconfig'), componentKubeconfig(server, pkiDir, 'admin'));
    clusters.push({
      name, context: name, devContext: `${name}-dev`, server, port: apiPort, kcmPort, schedPort, kwokPort,
      serviceCIDR, serviceIP, podCIDR: `10.${100 + i}.0.0/16`, nodeName: `${name}-node`,
      dir: cdir, pkiDir, auditLog: path.join(cdir, 'audit.log'), processes: {},
    });
  }
  log(`sandbox: certificates ready (${elapsed()})`);

  await waitFor('etcd /health', async () => {
    const r = await request(`${etcdEndpoint}/health`, { timeoutMs: 1000 });
    return r.status === 200 && JSON.parse(r.body).health === 'true';
  }, { timeoutMs: 30_000, procs: [etcdProc] });
  log(`sandbox: etcd healthy (${elapsed()})`);

  // every component of every cluster starts at once; they retry until the apiserver is up
  const live = [etcdProc];
  for (const c of clusters) {
    const pki = (f) => path.join(c.pkiDir, f);
    const clog = (n) => path.join(logsDir, `${c.name}-${n}.log`);
    const api = startProcess(`${c.name}/kube-apiserver`, path.join(bin, 'kube-apiserver'), [
      `--etcd-servers=${etcdEndpoint}`,
      `--etcd-prefix=/cluster-${c.name.split('-')[1]}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      // Endpoints may not point at loopback; the sandbox has no in-cluster clients anyway
      '--endpoint-reconciler-type=none',
      `--secure-port=${c.port}`,
      `--tls-cert-file=${pki('apiserver.crt')}`,
      `--tls-private-key-file=${pki('apiserver.key')}`,
      `--client-ca-file=${pki('ca.crt')}`,
      `--service-account-issuer=https://kubernetes.default.svc.cluster.local`,
      `--service-account-key-file=${pki('sa.pub')}`,
      `--service-account-signing-key-file=${pki('sa.key')}`,
      `--service-cluster-ip-range=${c.serviceCIDR}`,
      '--authorization-mode=Node,RBAC',
      // Debian's etcd 3.4 lacks reliable progress notifications, so the watch
      // cache refuses streaming (sendInitialEvents) watches, which kwok uses;
      // kwok then only catches up on relists (~15-45 s per pod change). Without
      // the watch cache, watches are served by etcd directly and work.
      '--watch-cache=false',
      '--allow-privileged=true',
      `--audit-policy-file=${auditPolicy}`,
      `--egress-selector-config-file=${egressConfig}`,
      `--audit-log-path=${c.auditLog}`,
      '--audit-log-mode=blocking',
      '--audit-log-format=json',
      '--profiling=false',
      '--v=1',
    ], clog('kube-apiserver'), started);
    const kcm = startProcess(`${c.name}/kube-controller-manager`, path.join(bin, 'kube-controller-manager'), [
      `--kubeconfig=${path.join(c.dir, 'controller-manager.kubeconfig')}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${c.kcmPort}`,
      '--use-service-account-credentials=true',
      `--service-account-private-key-file=${pki('sa.key')}`,
      `--root-ca-file=${pki('ca.crt')}`,
      `--cluster-signing-cert-file=${pki('ca.crt')}`,
      `--cluster-signing-key-file=${pki('ca.key')}`,
      `--service-cluster-ip-range=${c.serviceCIDR}`,
      '--controllers=*',
      // On a loaded 2-core machine kwok's node heartbeats can lag past the default
      // grace period (50 s); the node-lifecycle-controller would then mark the node
      // and every pod NotReady (seen: rollouts flapping to 0 ready mid-test). The
      // fake node never really fails, so give it an hour. The controller must stay
      // on: it removes the node.kubernetes.io/not-ready taint that admission
      // (TaintNodesByCondition) puts on every new Node; without it nothing schedules.
      '--node-monitor-grace-period=1h',
      '--leader-elect=false',
      '--kube-api-qps=200',
      '--kube-api-burst=400',
      '--profiling=false',
      '--v=1',
    ], clog('kube-controller-manager'), started);
    const sched = startProcess(`${c.name}/kube-scheduler`, path.join(bin, 'kube-scheduler'), [
      `--kubeconfig=${path.join(c.dir, 'scheduler.kubeconfig')}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${c.schedPort}`,
      '--leader-elect=false',
      '--kube-api-qps=200',
      '--kube-api-burst=400',
      '--profiling=false',
      '--v=1',
    ], clog('kube-scheduler'), started);
    const kwok = startProcess(`${c.name}/kwok`, path.join(bin, 'kwok'), [
      `--kubeconfig=${path.join(c.dir, 'kwok.kubeconfig')}`,
      `--config=${stagesFile}`,
      '--manage-all-nodes=false',
      `--manage-nodes-with-annotation-selector=${NODE_ANNOTATION}=fake`,
      `--cidr=${c.podCIDR}`,
      '--node-ip=127.0.0.1',
      `--node-name=${c.nodeName}`,
      `--node-port=${c.kwokPort}`,
      `--server-address=127.0.0.1:${c.kwokPort}`,
      `--tls-cert-file=${pki('apiserver.crt')}`,
      `--tls-private-key-file=${pki('apiserver.key')}`,
      '--node-lease-duration-seconds=40',
    ], clog('kwok'), started);
    c.processes = { 'kube-apiserver': strip(api), 'kube-controller-manager': strip(kcm), 'kube-scheduler': strip(sched), kwok: strip(kwok) };
    c._live = { api, kcm, sched, kwok };
    live.push(api, kcm, sched, kwok);
  }
  // the only egress the apiservers get: each fake node's kubelet (kwok) port, for exec and logs
  const egress = startProcess('kubelet-egress', process.execPath, [path.join(HERE, 'kubelet-egress.mjs'), egressSocket, clusters.map((c) => `${c.nodeName}:${c.kwokPort}`).join(',')], path.join(logsDir, 'kubelet-egress.log'), started);
  state.egress = { process: strip(egress) };
  live.push(egress);
  state.clusters = clusters.map(publicCluster);
  save();
  log(`sandbox: started ${count} control plane(s) (kube-apiserver, kube-controller-manager, kube-scheduler, kwok) (${elapsed()})`);

  await Promise.all(clusters.map(async (c) => {
    const tls = adminTls(c);
    const procs = [etcdProc, ...Object.values(c._live)];
    await waitFor(`${c.name} kube-apiserver /readyz`, async () => (await request(`${c.server}/readyz`, { tls, timeoutMs: 2000 })).status === 200, { timeoutMs: 90_000, procs });
    log(`sandbox: ${c.name} apiserver ready on ${c.server} (${elapsed()})`);
    const created = await request(`${c.server}/api/v1/nodes`, { method: 'POST', tls, body: fakeNode(c.nodeName) });
    if (created.status !== 201 && created.status !== 409) throw new Error(`${c.name}: creating fake node failed: HTTP ${created.status} ${created.body}`);
    await waitFor(`${c.name} node ${c.nodeName} Ready (kwok)`, async () => {
      const r = await request(`${c.server}/api/v1/nodes/${c.nodeName}`, { tls });
      if (r.status !== 200) return false;
      const node = JSON.parse(r.body);
      const ready = (node.status?.conditions ?? []).find((x) => x.type === 'Ready');
      const tainted = (node.spec?.taints ?? []).length > 0;
      return ready?.status === 'True' && !tainted;
    }, { timeoutMs: 60_000, procs });
    // kube-controller-manager works once it created the default ServiceAccount
    await waitFor(`${c.name} default ServiceAccount (kube-controller-manager)`, async () => (await request(`${c.server}/api/v1/namespaces/default/serviceaccounts/default`, { tls })).status === 200, { timeoutMs: 60_000, procs });
    for (const [what, port] of [['kube-scheduler', c.schedPort], ['kube-controller-manager', c.kcmPort]]) {
      await waitFor(`${c.name} ${what} /healthz`, async () => (await request(`https://127.0.0.1:${port}/healthz`, { tls: { insecure: true }, timeoutMs: 2000 })).status === 200, { timeoutMs: 60_000, procs });
    }
    log(`sandbox: ${c.name} node Ready, controllers and scheduler healthy (${elapsed()})`);
  }));

  fs.writeFileSync(state.kubeconfig, sandboxKubeconfig(clusters), { mode: 0o600 });
  fs.writeFileSync(state.inventory, inventoryYaml(clusters, state.kubeconfig));
  state.coldStartMs = Date.now() - t0;
  state.clusters = clusters.map(publicCluster);
  save();

  log(`sandbox: ${count} cluster(s) up in ${(state.coldStartMs / 1000).toFixed(1)} s (cold start)`);
  const mem = memoryReport(state);
  for (const line of mem.lines) log(`  ${line}`);
  log(`kubeconfig: ${state.kubeconfig}`);
  log(`inventory:  ${state.inventory}`);
  log(`state:      ${statePath()}`);
  log(`logs:       ${logsDir}`);
  return state;
}

/** RSS per cluster (sum of its processes) and of the shared etcd, from /proc. */
export function memoryReport(state) {
  const lines = [];
  let total = 0;
  for (const c of state.clusters) {
    const parts = Object.entries(c.processes).map(([n, p]) => [n, rssKiB(p.pid)]);
    const sum = parts.reduce((a, [, k]) => a + k, 0);
    total += sum;
    lines.push(`${c.name}: RSS ${Math.round(sum / 1024)} MiB (${parts.map(([n, k]) => `${n} ${Math.round(k / 1024)}`).join(', ')})`);
  }
  const etcd = state.etcd.process ? rssKiB(state.etcd.process.pid) : 0;
  total += etcd;
  lines.push(`etcd (shared): RSS ${Math.round(etcd / 1024)} MiB; total ${Math.round(total / 1024)} MiB`);
  return { lines, totalMiB: Math.round(total / 1024) };
}

function strip(proc) {
  return { name: proc.name, bin: proc.bin, pid: proc.pid, log: proc.log };
}

function publicCluster(c) {
  return {
    name: c.name,
    context: c.context,
    devContext: c.devContext,
    server: c.server,
    port: c.port,
    serviceCIDR: c.serviceCIDR,
    nodeName: c.nodeName,
    auditLog: c.auditLog,
    pkiDir: c.pkiDir,
    kcmPort: c.kcmPort,
    schedPort: c.schedPort,
    kwokPort: c.kwokPort,
    processes: c.processes,
  };
}
