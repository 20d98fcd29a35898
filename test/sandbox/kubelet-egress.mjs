// The sandbox apiservers' only way out to "the cluster network" (their egress selector's
// HTTP CONNECT proxy on a unix socket, lib.mjs): CONNECT to a fake node's kubelet port — kwok's
// server, which answers pods/exec and pods/log — is tunnelled to that port on loopback;
// every other destination (webhooks, service and pod IPs) is refused at once, as before.
//
//   node test/sandbox/kubelet-egress.mjs SOCKET NODE:PORT[,NODE:PORT...]
import fs from 'node:fs';
import net from 'node:net';

const [socketPath, allowList = ''] = process.argv.slice(2);
if (!socketPath) {
  console.error('usage: kubelet-egress.mjs SOCKET NODE:PORT[,NODE:PORT...]');
  process.exit(2);
}
/** `host:port` the apiserver may reach → the loopback port it is tunnelled to. */
const allowed = new Map(allowList.split(',').filter(Boolean).map((hp) => [hp, Number(hp.split(':').pop())]));

try {
  fs.unlinkSync(socketPath);
} catch {
  // not there
}
const server = net.createServer((client) => {
  let head = Buffer.alloc(0);
  const onData = (chunk) => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) {
      if (head.length > 8192) client.destroy();
      return;
    }
    client.off('data', onData);
    const m = /^CONNECT (\S+) HTTP\/1\.[01]\r\n/.exec(head.subarray(0, end).toString('latin1'));
    const port = m ? allowed.get(m[1]) : undefined;
    if (!port) {
      client.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const upstream = net.connect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection established\r\n\r\n');
      const rest = head.subarray(end + 4);
      if (rest.length) upstream.write(rest);
      client.pipe(upstream).pipe(client);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  };
  client.on('data', onData);
  client.on('error', () => client.destroy());
});
server.listen(socketPath, () => console.log(`kubelet-egress: listening on ${socketPath}, allowing ${[...allowed.keys()].join(', ') || 'nothing'}`));
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
