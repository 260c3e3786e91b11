import { createServer, type Server } from 'node:net';

/**
 * Distinct free TCP ports on 127.0.0.1. All listeners stay open until every port is known, so the
 * kernel cannot hand the same port out twice within one call.
 */
export async function findFreeLoopbackPorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let index = 0; index < count; index += 1) {
      const server = createServer();
      servers.push(server);
      ports.push(
        await new Promise<number>((resolve, reject) => {
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => {
            const address = server.address();
            if (address === null || typeof address === 'string') {
              reject(new Error('a loopback listener reported no port'));
              return;
            }
            resolve(address.port);
          });
        }),
      );
    }
    return ports;
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }
}
