/**
 * `get_url`: download a file over HTTP(S) to a local path, as ansible.builtin.get_url does under
 * `connection: local`.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { applyAttrs, defineModule, digest, httpRequest, localPath, maskUrl, pathInfo, secretHeaderValues, sha1File, writeDest, Default, Type, type HttpRequest, PathAttrsResult } from 'kplay/sdk';

/** The file name a response or URL gives (Content-Disposition, else the URL's last segment). */
function fileName(headers: Record<string, string>, url: string): string {
  const m = /filename="?([^";]+)"?/i.exec(headers['content-disposition'] ?? '');
  if (m?.[1]) return path.basename(m[1]);
  const base = path.basename(new URL(url).pathname);
  return base || 'index.html';
}

export default defineModule({
  name: 'get_url',
  summary: 'Download a file over HTTP(S) to a local path (ansible.builtin.get_url)',
  description: [
    'Downloads on the machine running kplay, as `ansible.builtin.get_url` with `connection: local`: not downloaded again when `dest` exists and `checksum` matches (or, without `force`, when the server answers 304 to `If-Modified-Since`); replaced only when the content differs (SHA-1); `checksum: "sha256:HEX"` (or `sha256:URL` of a checksum file) is verified; `backup`, `mode`/`owner`/`group`, `tmp_dest`, check mode (a HEAD request, as Ansible).',
    'Result: `dest`, `url`, `status_code`, `msg`, `elapsed`, `checksum_src`, `checksum_dest`, `md5sum`, `backup_file` and the file\'s attributes. `url_password` and secret-looking headers are masked. Not supported: ftp/file URLs, proxies (kplay connects directly).',
  ].join('\n\n'),
  schema: Type.Object(
    {
      url: Type.String({ description: 'HTTP or HTTPS URL to download.', examples: ['https://get.helm.sh/helm-v3.16.0-linux-amd64.tar.gz'] }),
      dest: Type.String({ description: 'File to write, or a directory (the name comes from the response or the URL).' }),
      checksum: Default(Type.String({ description: '`ALGORITHM:HEX` (e.g. `sha256:…`) or `ALGORITHM:URL` of a checksum file; the download must match.' }), ''),
      force: Default(Type.Boolean({ description: 'Download even when `dest` exists (replaced when the content differs).' }), false),
      backup: Default(Type.Boolean({ description: 'Keep the old file as `dest.PID.DATE@TIME~`.' }), false),
      headers: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Request headers.' })),
      url_username: Type.Optional(Type.String({ description: 'User for basic auth (alias `username`).' })),
      username: Type.Optional(Type.String({ description: 'Alias of `url_username`.' })),
      url_password: Type.Optional(Type.String({ description: 'Password for basic auth (alias `password`); masked.' })),
      password: Type.Optional(Type.String({ description: 'Alias of `url_password`.' })),
      force_basic_auth: Default(Type.Boolean({ description: 'Send the credentials with the first request.' }), false),
      validate_certs: Default(Type.Boolean({ description: 'Check the server\'s TLS certificate.' }), true),
      ca_path: Type.Optional(Type.String({ description: 'CA bundle (PEM).' })),
      client_cert: Type.Optional(Type.String({ description: 'Client certificate (PEM).' })),
      client_key: Type.Optional(Type.String({ description: 'Key of the client certificate (PEM).' })),
      timeout: Default(Type.Number({ exclusiveMinimum: 0, description: 'Socket timeout in seconds.' }), 10),
      tmp_dest: Type.Optional(Type.String({ description: 'Accepted for compatibility: kplay downloads into memory and writes `dest` atomically (a temporary file next to it).' })),
      http_agent: Default(Type.String({ description: 'User-Agent header.' }), 'ansible-httpget'),
      decompress: Default(Type.Boolean({ description: 'Decompress a gzip response.' }), true),
      use_proxy: Default(Type.Boolean({ description: 'Ansible uses the environment\'s proxy; kplay connects directly.' }), true),
      mode: Type.Optional(Type.Union([Type.String(), Type.Integer()], { description: 'Permissions of `dest`.' })),
      owner: Type.Optional(Type.String({ description: 'Owner of `dest`.' })),
      group: Type.Optional(Type.String({ description: 'Group of `dest`.' })),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    dest: Type.String({ description: 'The file written (or that would be).' }),
    url: Type.String({ description: 'The URL (password masked).' }),
    status_code: Type.Optional(Type.Integer({ description: 'HTTP status.' })),
    elapsed: Type.Integer({ description: 'Whole seconds the download took.' }),
    checksum_src: Type.Union([Type.String(), Type.Null()], { description: 'SHA-1 of the downloaded content.' }),
    checksum_dest: Type.Union([Type.String(), Type.Null()], { description: 'SHA-1 of `dest` before the download (null when absent).' }),
    md5sum: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'MD5 of `dest`.' })),
    backup_file: Type.Optional(Type.String({ description: 'The backup made.' })),
    state: Type.Optional(Type.String({ description: '`file`.' })),
    ...PathAttrsResult,
  }),
  diffMode: 'unsupported',
  checkMode: 'supported',
  declaresState: true,
  examples: [{ title: 'A verified download', yaml: '- get_url:\n    url: https://example.com/tool-1.2.3.tar.gz\n    dest: /tmp/kplay/tool.tar.gz\n    checksum: sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n    mode: "0644"' }],
  async run(args, ctx) {
    const password = args.url_password ?? args.password;
    if (password) ctx.addSecret(password);
    const headers: Record<string, string> = { 'User-Agent': args.http_agent };
    for (const [k, v] of Object.entries(args.headers ?? {})) headers[k] = typeof v === 'string' ? v : JSON.stringify(v);
    for (const v of secretHeaderValues(headers)) ctx.addSecret(v);
    const url = maskUrl(args.url);
    let dest = localPath(args.dest);
    const base = { dest, url, elapsed: 0, checksum_src: null, checksum_dest: null };
    const request = (u: string, method: string, lastModified?: Date): Promise<Awaited<ReturnType<typeof httpRequest>>> => {
      const req: HttpRequest = { url: u, method, headers, followRedirects: 'safe', timeoutMs: args.timeout * 1000, validateCerts: args.validate_certs, username: args.url_username ?? args.username, password, forceBasicAuth: args.force_basic_auth, decompress: args.decompress, caPath: args.ca_path, clientCert: args.client_cert, clientKey: args.client_key, lastModified, signal: ctx.signal };
      return httpRequest(req);
    };
    let algorithm = '';
    let expected = '';
    if (args.checksum !== '') {
      const i = args.checksum.indexOf(':');
      if (i < 0) return { status: 'failed', msg: 'The checksum parameter has to be in format <algorithm>:<checksum>', data: base };
      algorithm = args.checksum.slice(0, i);
      expected = args.checksum.slice(i + 1);
      if (/^https?:\/\//.test(expected)) {
        const r = await request(expected, 'GET');
        if (r.status !== 200) return { status: 'failed', msg: `Request failed: ${r.msg}`, data: base };
        const name = path.basename(new URL(args.url).pathname);
        const found = r.body
          .toString('utf8')
          .split('\n')
          .map((l) => l.trim().split(/\s+/))
          .find((parts) => parts.length === 1 ? true : (parts[1] ?? '').replace(/^[*.]\/?/, '').replace(/^\*/, '') === name);
        if (!found?.[0]) return { status: 'failed', msg: `Unable to find a checksum for file '${name}' in '${maskUrl(expected)}'` };
        expected = found[0];
      }
      expected = expected.replace(/\W+/g, '').toLowerCase();
      if (!/^[0-9a-f]+$/.test(expected)) return { status: 'failed', msg: 'The checksum format is invalid', data: base };
      try {
        digest('', algorithm);
      } catch {
        return { status: 'failed', msg: `Could not hash file with algorithm '${algorithm}'`, data: base };
      }
    }
    const destIsDir = existsSync(dest) && statSync(dest).isDirectory();
    let force = args.force;
    let lastModified: Date | undefined;
    if (!destIsDir && existsSync(dest)) {
      const mismatch = !force && expected !== '' && digest(readFileSync(dest), algorithm) !== expected;
      if (!force && expected !== '' && !mismatch) {
        const c = applyAttrs(dest, { mode: args.mode, owner: args.owner, group: args.group }, ctx.checkMode);
        return { status: c.changed ? 'changed' : 'ok', msg: c.changed ? 'file already exists but file attributes changed' : 'file already exists', data: { ...base, ...pathInfo(dest) } };
      }
      if (!force) lastModified = statSync(dest).mtime;
      if (mismatch) {
        force = true;
        lastModified = undefined;
      }
    }
    const started = Date.now();
    const r = await request(args.url, ctx.checkMode ? 'HEAD' : 'GET', force ? undefined : lastModified);
    const elapsed = Math.floor((Date.now() - started) / 1000);
    if (r.status === 304) return { status: 'ok', msg: r.msg, data: { ...base, elapsed, status_code: 304, ...(existsSync(dest) ? pathInfo(dest) : {}) } };
    if (r.status === -1) return { status: 'failed', msg: r.msg, data: { ...base, elapsed } };
    if (r.status !== 200) return { status: 'failed', msg: `Request failed: ${r.msg}`, data: { ...base, elapsed, status_code: r.status } };
    if (destIsDir) dest = path.join(dest, fileName(r.headers, r.url));
    const sumSrc = digest(r.body, 'sha1');
    const sumDest = existsSync(dest) ? sha1File(dest) : null;
    const data = { ...base, dest, elapsed, checksum_src: sumSrc, checksum_dest: sumDest, status_code: r.status };
    if (!existsSync(path.dirname(dest))) return { status: 'failed', msg: `Destination ${path.dirname(dest)} does not exist`, data };
    if (ctx.checkMode) return { status: sumDest === null || sumSrc !== sumDest ? 'changed' : 'ok', msg: r.msg, data };
    if (expected !== '') {
      const got = digest(r.body, algorithm);
      if (got !== expected) return { status: 'failed', msg: `The checksum for ${dest} did not match ${expected}; it was ${got}.`, data };
    }
    const w = await writeDest({ dest, content: r.body, mode: args.mode, owner: args.owner, group: args.group, force: true, backup: args.backup }, ctx);
    if (w.status === 'failed') return { status: 'failed', msg: w.msg, data };
    const out: Record<string, unknown> = { ...data, md5sum: digest(readFileSync(dest), 'md5'), ...pathInfo(dest) };
    if (w.status !== 'skipped' && w.data?.backup_file !== undefined) out.backup_file = w.data.backup_file;
    return { status: w.status === 'changed' ? 'changed' : 'ok', msg: r.msg, data: out as typeof data };
  },
});
