// /healthz answers while the process runs (liveness); /readyz answers 200 only when the bridge is doing
// its job (readiness), with the details either way so `kubectl describe` and operators can see why.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Readiness {
  ready: boolean;
  details: Record<string, unknown>;
}

export interface HealthServer {
  /** The port actually bound (useful when 0 was asked for). */
  port: number;
  close(): Promise<void>;
}

export async function startHealthServer(options: {
  port: number;
  host?: string;
  readiness: () => Readiness;
}): Promise<HealthServer> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      reply(405, { error: 'method not allowed' });
      return;
    }
    if (path === '/healthz') {
      reply(200, { status: 'ok' });
      return;
    }
    if (path === '/readyz') {
      const { ready, details } = options.readiness();
      reply(ready ? 200 : 503, { status: ready ? 'ready' : 'not ready', ...details });
      return;
    }
    reply(404, { error: 'not found' });

    function reply(status: number, body: Record<string, unknown>): void {
      const text = JSON.stringify(body);
      response.writeHead(status, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
        'cache-control': 'no-store',
      });
      response.end(request.method === 'HEAD' ? undefined : text);
    }
  });
  // Probes are short; do not let an idle keep-alive connection hold shutdown open.
  server.keepAliveTimeout = 1_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });

  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
      }),
  };
}
