// When a fresh read waits for the watch-fed cache and when it gives up, and why (Reflector.itemsAsOf),
// against a watch served over HTTP in this process, so the test decides exactly when each event is on the
// wire. The case that matters at 1,000 nodes: a process busy for longer than the quiet time (a sweep's
// computation) must not take the watch for quiet while the event it waits for sits unread on its socket;
// it listed 4 MB of NodeClaims instead, for seconds, in most rounds of a drift's marks.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { Reflector } from '../../../shared/kube/reflector.js';

interface Thing {
  metadata: { name: string; resourceVersion: string };
}

const thing = (name: string, resourceVersion: number): Thing => ({
  metadata: { name, resourceVersion: String(resourceVersion) },
});

let server: Server;
let watchResponse: ServerResponse | undefined;
let reflector: Reflector<Thing, Thing>;

/** Writes one watch event and resolves once it is handed to the socket (the kernel holds it). */
function send(type: string, object: Thing): Promise<void> {
  const response = watchResponse;
  if (!response) throw new Error('no watch is open');
  return new Promise((resolve, reject) =>
    response.write(`${JSON.stringify({ type, object })}\n`, (error) => (error ? reject(error) : resolve())),
  );
}

/** Keeps this process from reading anything for `ms`, as a long synchronous computation does. */
function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Spin: no timer, no I/O.
  }
}

async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

beforeEach(async () => {
  watchResponse = undefined;
  server = createServer((request, response) => {
    if (!request.url?.includes('watch=true')) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    response.flushHeaders();
    watchResponse = response;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'local', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'nobody' }],
    contexts: [{ name: 'local', cluster: 'local', user: 'nobody' }],
    currentContext: 'local',
  });
  reflector = new Reflector<Thing, Thing>({
    name: 'things',
    source: {
      path: '/apis/example.test/v1/things',
      listPage: () =>
        Promise.resolve({ items: [thing('a', 10)], resourceVersion: '10', continueToken: undefined }),
      kubeConfig: () => Promise.resolve(config),
    },
    project: (t) => t,
    keyOf: (t) => t.metadata.name,
  });
  await reflector.items();
  await until('the watch to open', () => watchResponse !== undefined);
});

afterEach(async () => {
  reflector.stop();
  watchResponse?.end();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const names = (result: Awaited<ReturnType<Reflector<Thing, Thing>['itemsAsOf']>>) =>
  'items' in result ? result.items.map((t) => t.metadata.name).sort() : result.missed;

describe('Reflector.itemsAsOf', () => {
  it('answers at once from a cache that has seen the version', async () => {
    await send('ADDED', thing('b', 11));
    await until('b in the cache', async () => (await reflector.items()).length === 2);
    expect(names(await reflector.itemsAsOf('11', 1_000, 300))).toEqual(['a', 'b']);
  });

  it('reads the event waiting on its socket before it calls a watch quiet, after a busy stretch longer than the quiet time', async () => {
    await send('ADDED', thing('b', 11));
    await until('b in the cache', async () => (await reflector.items()).length === 2);
    // The watch has been silent for longer than the quiet time, then the event the read needs arrives
    // while the process is busy.
    await new Promise((resolve) => setTimeout(resolve, 400));
    await send('ADDED', thing('c', 12));
    busyFor(500);
    expect(names(await reflector.itemsAsOf('12', 5_000, 300))).toEqual(['a', 'b', 'c']);
  });

  it('gives up as quiet when nothing of the kind comes within the quiet time', async () => {
    expect(names(await reflector.itemsAsOf('12', 5_000, 300))).toBe('quiet');
  });

  it('gives up as late when events keep coming but none reaches the version within the wait', async () => {
    await send('ADDED', thing('b', 11));
    await until('b in the cache', async () => (await reflector.items()).length === 2);
    let version = 12;
    const ticking = setInterval(() => void send('MODIFIED', thing('a', version++)), 50);
    try {
      expect(names(await reflector.itemsAsOf('100000', 600, 300))).toBe('late');
    } finally {
      clearInterval(ticking);
    }
  });

  it('gives up at once when the versions do not compare', async () => {
    expect(names(await reflector.itemsAsOf('not-a-number', 5_000, 300))).toBe('incomparable');
  });
});
