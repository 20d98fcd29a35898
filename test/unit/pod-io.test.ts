// pods/exec over a WebSocket (src/k8s/websocket.ts, Transport.upgrade, src/k8s/pod-io.ts) against a
// local server speaking the apiserver's channel protocol, and kubernetes.core's readings of what comes
// back (modules/k8s_exec.ts exitCode, modules/k8s_log.ts extractSelectors).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { exitCode } from '../../modules/k8s_exec.js';
import { extractSelectors } from '../../modules/k8s_log.js';
import { Transport } from '../../src/k8s/http.js';
import { podExec } from '../../src/k8s/pod-io.js';
import { KubeRequests } from '../../src/k8s/requests.js';
import { acceptFor, clientFrame, FrameReader } from '../../src/k8s/websocket.js';

/** A server frame (unmasked). */
const frame = (opcode: number, payload: Buffer, fin = true): Buffer => {
  const len = payload.length;
  const head = len < 126 ? Buffer.from([(fin ? 0x80 : 0) | opcode, len]) : Buffer.from([(fin ? 0x80 : 0) | opcode, 126, len >> 8, len & 0xff]);
  return Buffer.concat([head, payload]);
};
const chan = (n: number, s: string): Buffer => Buffer.concat([Buffer.from([n]), Buffer.from(s)]);

describe('FrameReader', () => {
  it('joins fragments, reads 16-bit lengths and frames split across chunks', () => {
    const big = 'x'.repeat(300);
    const bytes = Buffer.concat([frame(2, chan(1, 'ab'), false), frame(0, Buffer.from('cd')), frame(2, chan(2, big)), frame(8, Buffer.from([3, 232]))]);
    const r = new FrameReader();
    const got = [...r.push(bytes.subarray(0, 5)), ...r.push(bytes.subarray(5, 9)), ...r.push(bytes.subarray(9))];
    expect(got.map((m) => [m.opcode, m.data.toString('latin1')])).toEqual([
      [2, '\u0001abcd'],
      [2, `\u0002${big}`],
      [8, '\u0003\u00e8'],
    ]);
  });
  it('unmasks what a client sends', () => {
    const [m] = new FrameReader().push(clientFrame(2, Buffer.from('hello'), Buffer.from([1, 2, 3, 4])));
    expect(m?.data.toString()).toBe('hello');
  });
});

describe('pods/exec over a WebSocket', () => {
  let seen: { url?: string; protocol?: string } = {};
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  server.on('upgrade', (req, socket) => {
    seen = { url: req.url, protocol: String(req.headers['sec-websocket-protocol']) };
    if (req.url?.includes('container=nope')) {
      const body = JSON.stringify({ kind: 'Status', status: 'Failure', reason: 'BadRequest', message: 'container nope is not valid' });
      socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      return;
    }
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptFor(String(req.headers['sec-websocket-key']))}\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n`);
    const status = { metadata: {}, status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '3' }] } };
    socket.write(Buffer.concat([frame(2, chan(1, 'out 1\n')), frame(2, chan(2, 'err\n')), frame(2, chan(1, 'out 2\n')), frame(2, chan(3, JSON.stringify(status))), frame(8, Buffer.from([3, 232]))]));
  });
  const listening = new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  afterAll(() => server.close());
  const client = async (): Promise<KubeRequests> => {
    await listening;
    const { port } = server.address() as AddressInfo;
    return new KubeRequests('t', `http://127.0.0.1:${port}`, new Transport({ cluster: 't', server: `http://127.0.0.1:${port}` }));
  };

  it('sends the command as repeated parameters and collects stdout, stderr and the status', async () => {
    const r = await podExec(await client(), { namespace: 'ns', pod: 'p', container: 'c', command: ['sh', '-c', 'echo a b'] });
    expect(seen.url).toBe('/api/v1/namespaces/ns/pods/p/exec?command=sh&command=-c&command=echo%20a%20b&container=c&stdout=true&stderr=true&stdin=false&tty=false');
    expect(seen.protocol).toBe('v5.channel.k8s.io, v4.channel.k8s.io');
    expect(r.stdout).toBe('out 1\nout 2\n');
    expect(r.stderr).toBe('err\n');
    expect(exitCode(r.status)).toBe(3);
  });
  it('a refused upgrade is a KubeApiError with the apiserver message', async () => {
    await expect(podExec(await client(), { namespace: 'ns', pod: 'p', container: 'nope', command: ['true'] })).rejects.toMatchObject({ name: 'KubeApiError', status: 400, apiMessage: 'container nope is not valid' });
  });
});

describe("kubernetes.core's readings", () => {
  it('exit codes: Success, a kubelet NonZeroExitCode, and what makes the Python module crash', () => {
    expect(exitCode({ status: 'Success' })).toBe(0);
    expect(exitCode({ status: 'Failure', details: { causes: [{ message: '137' }] } })).toBe(137);
    expect(exitCode({ status: 'Failure', details: { causes: [{ message: 'error executing command: exit status 3' }] } })).toBe("invalid literal for int() with base 10: 'error executing command: exit status 3'");
    expect(exitCode({ status: 'Failure' })).toBe("'details'");
  });
  it("an object's pod selector as label selector terms", () => {
    const spec = { selector: { matchLabels: { app: 'web', tier: 'x' }, matchExpressions: [{ key: 'a', operator: 'In', values: ['1', '2'] }, { key: 'b', operator: 'DoesNotExist' }, { key: 'c', operator: 'Exists' }] } };
    expect(extractSelectors({ spec }, 'apps/v1 Deployment')).toEqual(['app=web', 'tier=x', 'a in (1, 2)', '!b', 'c']);
    expect(() => extractSelectors({ spec: {} }, 'v1 ConfigMap')).toThrow('v1 ConfigMap does not support the log subresource directly, and no Pod selector was found on the object');
  });
});
