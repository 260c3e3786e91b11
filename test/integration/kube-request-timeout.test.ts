// Every Kubernetes request the product makes is abandoned after its timeout. The API server that never
// answers is a plain TCP listener that accepts connections and stays silent: the real kube-apiserver
// cannot be made to hang, so this is the one stand-in here.
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { kubeClientsFromConfig } from '../../shared/kube/client.js';
import { karpenterObjects } from '../../shared/kube/custom-objects.js';

let server: Server;
const sockets = new Set<Socket>();
let config: KubeConfig;

beforeAll(async () => {
  server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'silent', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'silent', cluster: 'silent', user: 'u' }],
    currentContext: 'silent',
  });
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

test('core and custom-object requests to an API server that never answers fail after the timeout', async () => {
  const clients = kubeClientsFromConfig(config, 300);
  const objects = karpenterObjects(() => Promise.resolve(clients));
  for (const call of [() => clients.core.listNode(), () => objects.nodeClaims.get('any')]) {
    const started = Date.now();
    await expect(call()).rejects.toMatchObject({ name: 'TimeoutError' });
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(5_000);
  }
});
