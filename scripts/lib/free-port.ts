// A loopback TCP port free at the moment of asking, for a child process to listen on (the port a
// child binds cannot be read back from it as easily as port 0 in-process).
// The tests and the benchmark share it.
import net from 'node:net';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
