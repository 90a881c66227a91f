/**
 * A process of its own for the forwarder benchmark: `server` is the Pod (a sink that acks every
 * 64 KiB and echoes single bytes), `forwarder` is the agent's userspace forwarder in front of it.
 * Prints its port on stdout; exits when its parent closes stdin.
 *   node --import tsx bench/agent/peer.ts server|forwarder [podPort]
 */
import { createServer } from 'node:net';
import { socketReserver } from '../../src/agent/port-reservation.ts';
import { UserspaceBackend } from '../../src/agent/rules/userspace.ts';

const [role, podPort] = process.argv.slice(2);
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();

if (role === 'server') {
  const s = createServer((sock) => {
    sock.setNoDelay(true);
    let pending = 0;
    sock.on('data', (d: Buffer) => {
      if (d.length === 1 && pending === 0) {
        sock.write(d);
        return;
      }
      pending += d.length;
      while (pending >= 65536) {
        pending -= 65536;
        sock.write('k');
      }
    });
    sock.on('error', () => {});
  });
  s.listen(0, '127.0.20.1', () => console.log((s.address() as { port: number }).port));
} else {
  let reservation;
  for (let port = 64900; !reservation && port < 65000; port++)
    reservation = await socketReserver.reserve('127.0.10.1', port, 'tcp');
  if (!reservation) throw new Error('no port to forward from');
  await new UserspaceBackend().add({
    podKey: 'bench/pod',
    podPort: Number(podPort),
    protocol: 'tcp',
    family: 'IPv4',
    podIP: '127.0.20.1',
    nodePort: reservation.port,
    hostPort: false,
    reservation,
  });
  console.log(reservation.port);
}
