// The event bridge against the real kube-apiserver (with the project's CRDs) and real Azurite, through
// the real @kubernetes/client-node informers and the real @azure/storage-queue client. Nothing is mocked;
// the queue outage is a real one: the bridge talks to Azurite through a TCP relay that the test closes
// (connections refused and cut) and reopens on the same port.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import type { Server, Socket } from 'node:net';
import { connect, createServer } from 'node:net';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { QueueClient } from '@azure/storage-queue';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { BridgeHandle } from '../../bridge/index.js';
import { startBridge } from '../../bridge/index.js';
import type { InformerVerb } from '../../bridge/relevance.js';
import { isProvisionable } from '../../bridge/relevance.js';
import { ResourceWatcher } from '../../bridge/watcher.js';
import type { ObjectChangeEvent } from '../../shared/events/cloud-event.js';
import { parseObjectChangeEvent } from '../../shared/events/cloud-event.js';
import { NodeClaimResource } from '../../shared/kube/crd-names.js';
import { LIST_PAGE_SIZE, pageOf } from '../../shared/kube/paging.js';
import { silentLogger } from '../../shared/observability/logger.js';
import { useAzurite } from '../support/azurite.js';
import { ControllableWatches } from '../support/controllable-watch.js';

declare module 'vitest' {
  export interface ProvidedContext {
    kubeconfigPath: string;
  }
}

const suffix = randomBytes(3).toString('hex');
const fastBackoff = { initialMs: 100, maxMs: 1_000, factor: 2, jitter: 0.1 };

/** Admin: the test's writes and reads. */
let kubeConfig: KubeConfig;
/** The bridge's ServiceAccount (infra/k8s/bridge), which the bridges under test run as. */
let bridgeKubeConfig: KubeConfig;
let custom: CustomObjectsApi;
let core: CoreV1Api;
const azuriteConnectionString = useAzurite();
let connectionString: string;
const createdNodeClaims: string[] = [];
const createdNodes: string[] = [];
const createdNamespaces: string[] = [];

beforeAll(async () => {
  kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(inject('kubeconfigPath'));
  custom = kubeConfig.makeApiClient(CustomObjectsApi);
  core = kubeConfig.makeApiClient(CoreV1Api);
  bridgeKubeConfig = new KubeConfig();
  bridgeKubeConfig.loadFromFile(inject('bridgeKubeconfigPath'));
  connectionString = azuriteConnectionString();
});

afterAll(async () => {
  for (const name of createdNodeClaims) {
    await custom.deleteClusterCustomObject({ ...NodeClaimResource, name }).catch(() => undefined);
  }
  for (const name of createdNodes) await core.deleteNode({ name }).catch(() => undefined);
  for (const name of createdNamespaces) await core.deleteNamespace({ name }).catch(() => undefined);
});

async function createNodeClaim(name: string, nodeClassRef: { group: string; kind: string; name: string }) {
  createdNodeClaims.push(name);
  const created = (await custom.createClusterCustomObject({
    ...NodeClaimResource,
    body: {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name },
      spec: {
        nodeClassRef,
        requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
      },
    },
  })) as { metadata: { uid: string; resourceVersion: string } };
  return created.metadata;
}

const aksRef = { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' };
const otherRef = { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' };

/** Reads and deletes messages from a queue, remembering every event it has seen. */
class QueueReader {
  readonly events: ObjectChangeEvent[] = [];
  readonly rawBodies: string[] = [];
  readonly client: QueueClient;

  constructor(queueName: string) {
    this.client = new QueueClient(connectionString, queueName);
  }

  async drain(): Promise<void> {
    await this.client.createIfNotExists();
    for (;;) {
      const { receivedMessageItems } = await this.client.receiveMessages({ numberOfMessages: 32 });
      if (receivedMessageItems.length === 0) return;
      for (const message of receivedMessageItems) {
        this.rawBodies.push(message.messageText);
        this.events.push(parseObjectChangeEvent(message.messageText));
        await this.client.deleteMessage(message.messageId, message.popReceipt);
      }
    }
  }

  about(kind: string, name: string): ObjectChangeEvent[] {
    return this.events.filter((event) => event.data.kind === kind && event.data.name === name);
  }

  async waitFor(
    kind: string,
    name: string,
    changeType?: string,
    timeoutMs = 30_000,
  ): Promise<ObjectChangeEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await this.drain();
      const found = this.about(kind, name).find(
        (event) => changeType === undefined || event.data.changeType === changeType,
      );
      if (found !== undefined) return found;
      if (Date.now() > deadline) {
        throw new Error(
          `no ${changeType ?? ''} message for ${kind}/${name} within ${timeoutMs} ms; saw ${JSON.stringify(this.events.map((e) => e.subject))}`,
        );
      }
      await sleep(200);
    }
  }
}

async function waitUntil(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** Everything the bridge had seen so far has left its outbox. */
async function settled(bridge: BridgeHandle): Promise<void> {
  await waitUntil(() => bridge.stats().buffered === 0, 'the outbox to drain');
}

async function waitForServiceAccount(namespace: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const found = await core
      .readNamespacedServiceAccount({ name: 'default', namespace })
      .then(() => true)
      .catch(() => false);
    if (found) return;
    if (Date.now() > deadline) throw new Error(`no default ServiceAccount in ${namespace}`);
    await sleep(100);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe('event bridge (real kube-apiserver, real Azurite)', () => {
  const queueName = `bridge-${suffix}`;
  let bridge: BridgeHandle;
  let reader: QueueReader;
  const watches = new ControllableWatches();

  beforeAll(async () => {
    reader = new QueueReader(queueName);
    bridge = await startBridge({
      watchFor: watches.watchFor,
      queue: { mode: 'connectionString', connectionString, queueName },
      kubernetes: { mode: 'kubeConfig', kubeConfig: bridgeKubeConfig },
      source: '/clusters/integration/event-bridge',
      healthPort: 0,
      healthHost: '127.0.0.1',
      resyncSeconds: 3_600,
      watchBackoff: fastBackoff,
      queueBackoff: fastBackoff,
      logger: silentLogger,
    });
    await waitUntil(() => bridge.ready(), 'the bridge to be ready');
  });

  afterAll(async () => {
    await bridge?.stop();
  });

  it('answers /healthz and /readyz', async () => {
    const healthz = await fetch(`http://127.0.0.1:${bridge.healthPort}/healthz`);
    expect(healthz.status).toBe(200);
    const readyz = await fetch(`http://127.0.0.1:${bridge.healthPort}/readyz`);
    expect(readyz.status).toBe(200);
    expect(await readyz.json()).toMatchObject({
      status: 'ready',
      informersSynced: true,
      queueReachable: true,
    });
  });

  it('publishes one CloudEvent naming a created NodeClaim with an AKSNodeClass ref, and nothing for another ref', async () => {
    const ours = `bridge-aks-${suffix}`;
    const theirs = `bridge-other-${suffix}`;
    const marker = `bridge-marker-${suffix}`;
    const created = await createNodeClaim(ours, aksRef);
    await createNodeClaim(theirs, otherRef);
    await createNodeClaim(marker, aksRef);

    const event = await reader.waitFor('NodeClaim', ours, 'ADDED');
    expect(event).toMatchObject({
      specversion: '1.0',
      source: '/clusters/integration/event-bridge',
      type: 'com.nodeclaim-azure.kubernetes.nodeclaim.added',
      subject: `NodeClaim/${ours}`,
      datacontenttype: 'application/json',
    });
    // Which object changed, never the object itself.
    expect(event.data).toEqual({
      kind: 'NodeClaim',
      name: ours,
      uid: created.uid,
      resourceVersion: created.resourceVersion,
      changeType: 'ADDED',
    });
    // Sent as plain JSON text (the Function reads it with messageEncoding: none).
    expect(reader.rawBodies.some((body) => body.startsWith('{') && body.includes(`"name":"${ours}"`))).toBe(
      true,
    );

    // The marker was created after the other-ref NodeClaim; once it is out, so is anything before it.
    await reader.waitFor('NodeClaim', marker, 'ADDED');
    await settled(bridge);
    await reader.drain();
    expect(reader.about('NodeClaim', theirs)).toEqual([]);
    expect(reader.about('NodeClaim', ours)).toHaveLength(1);
  });

  it('forwards a NodeClaim update that a handler cares about, not a status heartbeat', async () => {
    const name = `bridge-update-${suffix}`;
    await createNodeClaim(name, aksRef);
    await reader.waitFor('NodeClaim', name, 'ADDED');

    // A status-only change handlers ignore: capacity.
    await custom.patchClusterCustomObjectStatus({
      ...NodeClaimResource,
      name,
      body: [{ op: 'add', path: '/status', value: { capacity: { cpu: '4' } } }],
    });
    // Then one they act on: the launch's progress before the VM is there.
    await custom.patchClusterCustomObjectStatus({
      ...NodeClaimResource,
      name,
      body: [
        {
          op: 'add',
          path: '/status/conditions',
          value: [
            {
              type: 'Launched',
              status: 'Unknown',
              reason: 'VMProvisioning',
              message: '',
              lastTransitionTime: new Date().toISOString(),
            },
          ],
        },
      ],
    });
    const modified = await reader.waitFor('NodeClaim', name, 'MODIFIED');
    await settled(bridge);
    await reader.drain();
    expect(reader.about('NodeClaim', name).map((e) => e.data.changeType)).toEqual(['ADDED', 'MODIFIED']);
    const current = (await custom.getClusterCustomObject({ ...NodeClaimResource, name })) as {
      metadata: { resourceVersion: string };
    };
    expect(modified.data.resourceVersion).toBe(current.metadata.resourceVersion);
  });

  it('publishes Nodes that carry karpenter.sh/unregistered, and Azure Node deletions', async () => {
    const tainted = `bridge-node-tainted-${suffix}`;
    const plain = `bridge-node-plain-${suffix}`;
    const marker = `bridge-node-marker-${suffix}`;
    const providerID = (name: string) =>
      `azure:///subscriptions/s/resourceGroups/mc_rg/providers/Microsoft.Compute/virtualMachines/${name}`;
    createdNodes.push(tainted, plain, marker);
    await core.createNode({
      body: {
        metadata: { name: tainted },
        spec: {
          providerID: providerID(tainted),
          taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }],
        },
      },
    });
    await core.createNode({ body: { metadata: { name: plain }, spec: { providerID: 'kind://docker/x/y' } } });
    await core.createNode({
      body: {
        metadata: { name: marker },
        spec: { taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }] },
      },
    });

    const added = await reader.waitFor('Node', tainted, 'ADDED');
    expect(added.type).toBe('com.nodeclaim-azure.kubernetes.node.added');
    await reader.waitFor('Node', marker, 'ADDED');
    await settled(bridge);
    await reader.drain();
    expect(reader.about('Node', plain)).toEqual([]);

    await core.deleteNode({ name: tainted });
    await core.deleteNode({ name: plain });
    await reader.waitFor('Node', tainted, 'DELETED');
    await settled(bridge);
    await reader.drain();
    expect(reader.about('Node', plain)).toEqual([]);
  });

  it('keeps working after its watch connections are dropped', async () => {
    await waitUntil(() => bridge.stats().informers.NodeClaim.connected, 'a live NodeClaim watch');
    const restartsBefore = bridge.stats().informers.NodeClaim.restarts;
    expect(watches.of('NodeClaim').drop()).toBe(1);
    for (const watch of watches.all()) watch.drop();
    await waitUntil(
      () => bridge.stats().informers.NodeClaim.restarts > restartsBefore,
      'the watch to restart',
    );

    const name = `bridge-after-drop-${suffix}`;
    await createNodeClaim(name, aksRef);
    await reader.waitFor('NodeClaim', name, 'ADDED');
    // The ADDED may come from the relist, before the new watch connection is up.
    await waitUntil(() => bridge.stats().informers.NodeClaim.connected, 'the watch connected again');
  });

  it('relists after watch expiry (410 Gone) and reports what changed while it was not watching', async () => {
    const doomed = `bridge-doomed-${suffix}`;
    const changed = `bridge-changed-${suffix}`;
    await createNodeClaim(doomed, aksRef);
    await createNodeClaim(changed, aksRef);
    await reader.waitFor('NodeClaim', doomed, 'ADDED');
    await reader.waitFor('NodeClaim', changed, 'ADDED');
    await settled(bridge);

    for (const watch of watches.all()) watch.hold();
    await waitUntil(() => !bridge.stats().informers.NodeClaim.connected, 'the NodeClaim watch to close');
    const born = `bridge-born-while-away-${suffix}`;
    await custom.deleteClusterCustomObject({ ...NodeClaimResource, name: doomed });
    await createNodeClaim(born, aksRef);
    await custom.patchClusterCustomObject({
      ...NodeClaimResource,
      name: changed,
      body: [{ op: 'add', path: '/metadata/finalizers', value: ['example.com/hold'] }],
    });
    const { restarts: restartsBefore, lists: listsBefore } = bridge.stats().informers.NodeClaim;
    for (const watch of watches.all()) watch.release({ expired: true });

    await reader.waitFor('NodeClaim', doomed, 'DELETED');
    await reader.waitFor('NodeClaim', born, 'ADDED');
    await reader.waitFor('NodeClaim', changed, 'MODIFIED');
    // A 410 is a relist, not a failure: the informer was not restarted through the error path.
    expect(bridge.stats().informers.NodeClaim.restarts).toBe(restartsBefore);
    expect(bridge.stats().informers.NodeClaim.lists).toBe(listsBefore + 1);
    await custom.patchClusterCustomObject({
      ...NodeClaimResource,
      name: changed,
      body: [{ op: 'remove', path: '/metadata/finalizers' }],
    });
  });

  it('keeps pending pods named alike in two namespaces apart: each signalled, one deleted, the other still known', async () => {
    // StatefulSet pods are named alike in every namespace; the scheduler finds no node for these two.
    const podName = `web-${suffix}-0`;
    const [shop, blog] = [`bridge-shop-${suffix}`, `bridge-blog-${suffix}`];
    for (const namespace of [shop, blog]) {
      createdNamespaces.push(namespace);
      await core.createNamespace({ body: { metadata: { name: namespace } } });
      // Pods are admitted once the namespace's default ServiceAccount exists.
      await waitForServiceAccount(namespace);
    }
    // The bridge's own informer for pending pods, narrowed to these two by name, so that its cache can be
    // read exactly in a cluster other test files change meanwhile.
    const fieldSelector = `spec.nodeName=,metadata.name=${podName}`;
    const bridgeCore = bridgeKubeConfig.makeApiClient(CoreV1Api);
    const heard: string[] = [];
    const pods = new ResourceWatcher<'Pod'>({
      kubeConfig: bridgeKubeConfig,
      resource: {
        kind: 'Pod',
        path: '/api/v1/pods',
        fieldSelector,
        listPage: async (continueToken) =>
          pageOf(
            await bridgeCore.listPodForAllNamespaces({
              fieldSelector,
              limit: LIST_PAGE_SIZE,
              ...(continueToken !== undefined && { _continue: continueToken }),
            }),
          ),
      },
      backoff: fastBackoff,
      logger: silentLogger,
      onNotification: (verb: InformerVerb, pod) => heard.push(`${verb} ${pod.metadata.namespace}`),
    });
    const pending = (): string[] =>
      pods
        .objects()
        .filter(isProvisionable)
        .map((pod) => `${pod.metadata.namespace}/${pod.metadata.name}`)
        .sort();
    pods.start();
    try {
      await waitUntil(() => pods.synced, 'the pod informer to sync');
      // Every pod's change is merged into the one provisioning signal (bridge/change-buffer.ts), which
      // may name another test's pod: what the bridge owes each pod is a signal observed after it came.
      const createdAt: number[] = [];
      for (const namespace of [shop, blog]) {
        createdAt.push(Date.now());
        await core.createNamespacedPod({
          namespace,
          body: {
            metadata: { name: podName },
            spec: {
              nodeSelector: { 'bridge.test/nowhere': suffix },
              containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
            },
          },
        });
      }

      // A signal follows each of them.
      const deadline = Date.now() + 30_000;
      const lastSignalAt = (): number =>
        Math.max(0, ...reader.events.filter((e) => e.data.kind === 'Pod').map((e) => Date.parse(e.time)));
      while (lastSignalAt() < Math.max(...createdAt) && Date.now() < deadline) {
        await reader.drain();
        await sleep(200);
      }
      expect(lastSignalAt()).toBeGreaterThanOrEqual(Math.max(...createdAt));

      // And both are cached as pending, each on its own.
      await waitUntil(() => pending().length === 2, 'both pods cached as pending', 10_000).catch(
        () => undefined,
      );
      expect(pending()).toEqual([`${blog}/${podName}`, `${shop}/${podName}`].sort());

      await core.deleteNamespacedPod({ name: podName, namespace: shop, gracePeriodSeconds: 0 });
      await waitUntil(() => heard.includes(`delete ${shop}`), 'the deletion to be heard', 10_000).catch(
        () => undefined,
      );
      // The other pod is still pending and still known: the pod resync can still announce it.
      expect(pending()).toEqual([`${blog}/${podName}`]);

      await core.deleteNamespacedPod({ name: podName, namespace: blog, gracePeriodSeconds: 0 });
      await waitUntil(
        () => heard.includes(`delete ${blog}`),
        'the second deletion to be heard',
        10_000,
      ).catch(() => undefined);
      expect(heard.filter((verb) => verb.startsWith('delete')).sort()).toEqual(
        [`delete ${blog}`, `delete ${shop}`].sort(),
      );
      expect(pods.objects()).toEqual([]);
    } finally {
      await pods.stop();
    }
  });

  it('re-announces objects that still need work on resync', async () => {
    const name = `bridge-resync-${suffix}`;
    await createNodeClaim(name, aksRef);
    await reader.waitFor('NodeClaim', name, 'ADDED');
    await settled(bridge);
    expect(bridge.resyncNow()).toBeGreaterThan(0);
    const resync = await reader.waitFor('NodeClaim', name, 'RESYNC');
    expect(resync.type).toBe('com.nodeclaim-azure.kubernetes.nodeclaim.resync');
  });
});

/** A TCP relay in front of Azurite that can be taken down (refusing and cutting connections) and back up. */
class Relay {
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async up(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => socket.destroy());
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.#server = server;
  }

  async down(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const socket of this.#sockets) socket.destroy();
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe('event bridge through a queue outage', () => {
  it('keeps every change while the queue is down and delivers them when it is back', async () => {
    const queueName = `bridge-outage-${suffix}`;
    const reader = new QueueReader(queueName);
    await reader.drain();
    const queueEndpoint = new URL(/QueueEndpoint=([^;]+)/.exec(connectionString)?.[1] ?? '');
    const relay = new Relay({ host: queueEndpoint.hostname, port: Number(queueEndpoint.port) });
    await relay.up();
    const relayed = connectionString.replace(
      /QueueEndpoint=[^;]+/,
      `QueueEndpoint=http://127.0.0.1:${relay.port}${queueEndpoint.pathname}`,
    );

    const bridge = await startBridge({
      queue: { mode: 'connectionString', connectionString: relayed, queueName },
      kubernetes: { mode: 'kubeConfig', kubeConfig: bridgeKubeConfig },
      source: '/clusters/integration/event-bridge',
      healthPort: 0,
      healthHost: '127.0.0.1',
      resyncSeconds: 3_600,
      queueProbeIntervalMs: 200,
      // Well above a loaded Azurite's answer time: a send that timed out after Azurite stored it would
      // be sent again (at least once delivery) and show up twice. The outage is refused connections.
      queueRequestTimeoutMs: 10_000,
      watchBackoff: fastBackoff,
      queueBackoff: fastBackoff,
      logger: silentLogger,
    });
    try {
      await waitUntil(() => bridge.ready(), 'the bridge to be ready');
      const before = `bridge-before-outage-${suffix}`;
      await createNodeClaim(before, aksRef);
      await reader.waitFor('NodeClaim', before, 'ADDED');

      await relay.down();
      const during = Array.from({ length: 5 }, (_, i) => `bridge-during-outage-${i}-${suffix}`);
      for (const name of during) await createNodeClaim(name, aksRef);
      await waitUntil(() => bridge.stats().queue.consecutiveFailures >= 2, 'the bridge to notice the outage');
      await waitUntil(() => !bridge.ready(), 'readiness to drop');
      const readyz = await fetch(`http://127.0.0.1:${bridge.healthPort}/readyz`);
      expect(readyz.status).toBe(503);
      expect(await readyz.json()).toMatchObject({ queueReachable: false });
      // The watch may deliver the last creations a moment after the outage shows.
      await waitUntil(() => bridge.stats().buffered >= during.length, 'the changes held in the outbox');

      await relay.up();
      for (const name of during) await reader.waitFor('NodeClaim', name, 'ADDED');
      await waitUntil(() => bridge.ready(), 'readiness to return');
      await settled(bridge);
      await reader.drain();
      for (const name of [before, ...during]) expect(reader.about('NodeClaim', name)).toHaveLength(1);
    } finally {
      await bridge.stop();
      await relay.down();
    }
  });
});

describe('event bridge under backpressure', () => {
  it('pauses its watches when the outbox is full and loses nothing when it resumes', async () => {
    const queueName = `bridge-pressure-${suffix}`;
    const reader = new QueueReader(queueName);
    await reader.drain();
    const queueEndpoint = new URL(/QueueEndpoint=([^;]+)/.exec(connectionString)?.[1] ?? '');
    const relay = new Relay({ host: queueEndpoint.hostname, port: Number(queueEndpoint.port) });
    await relay.up();
    const relayed = connectionString.replace(
      /QueueEndpoint=[^;]+/,
      `QueueEndpoint=http://127.0.0.1:${relay.port}${queueEndpoint.pathname}`,
    );
    const bridge = await startBridge({
      queue: { mode: 'connectionString', connectionString: relayed, queueName },
      kubernetes: { mode: 'kubeConfig', kubeConfig: bridgeKubeConfig },
      source: '/clusters/integration/event-bridge',
      resyncSeconds: 3_600,
      bufferCapacity: 4,
      queueProbeIntervalMs: 200,
      // Well above a loaded Azurite's answer time: a send that timed out after Azurite stored it would
      // be sent again (at least once delivery) and show up twice. The outage is refused connections.
      queueRequestTimeoutMs: 10_000,
      watchBackoff: fastBackoff,
      queueBackoff: fastBackoff,
      logger: silentLogger,
    });
    try {
      await waitUntil(() => bridge.ready(), 'the bridge to be ready');
      await relay.down();
      const names = Array.from({ length: 12 }, (_, i) => `bridge-pressure-${i}-${suffix}`);
      for (const name of names) await createNodeClaim(name, aksRef);
      await waitUntil(() => bridge.stats().backpressure, 'the watches to pause');
      // Changes keep arriving while paused; they wait in the API server, not in the bridge: the buffer stops
      // growing. (Its size itself is not a measure here: the bridge watches the whole shared test cluster,
      // where other test files' NodeClaims change too.)
      const atPause = bridge.stats().buffered;
      for (const name of names.slice(0, 3)) await createNodeClaim(`${name}-late`, aksRef);
      await sleep(500);
      expect(bridge.stats().buffered).toBeLessThanOrEqual(atPause);
      names.push(...names.slice(0, 3).map((name) => `${name}-late`));

      await relay.up();
      for (const name of names) await reader.waitFor('NodeClaim', name, 'ADDED');
      await waitUntil(() => !bridge.stats().backpressure, 'the watches to resume');
      expect(bridge.stats().backpressureEpisodes).toBeGreaterThanOrEqual(1);
      await settled(bridge);
      await reader.drain();
      for (const name of names) expect(reader.about('NodeClaim', name)).toHaveLength(1);
    } finally {
      await bridge.stop();
      await relay.down();
    }
  });
});

/** POSTs an object to the API server with strict field validation, optionally as a dry run. */
async function postStrict(
  body: Record<string, unknown>,
  collectionPath: string,
  dryRun: boolean,
): Promise<number> {
  const server = new URL(kubeConfig.getCurrentCluster()?.server ?? '');
  const options: { headers: Record<string, string> } & Record<string, unknown> = {
    method: 'POST',
    hostname: server.hostname,
    port: server.port,
    path: `${collectionPath}?fieldValidation=Strict${dryRun ? '&dryRun=All' : ''}`,
    headers: { 'content-type': 'application/json' },
  };
  await kubeConfig.applyToHTTPSOptions(options);
  return new Promise((resolve, reject) => {
    const call = request(options, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => {
        const status = response.statusCode ?? 0;
        if (status === 201 || status === 200 || status === 409) resolve(status);
        else reject(new Error(`POST ${collectionPath} → ${status}: ${text}`));
      });
    });
    call.on('error', reject);
    call.end(JSON.stringify(body));
  });
}

const collectionOf: Record<string, (namespace: string) => string> = {
  Namespace: () => '/api/v1/namespaces',
  ServiceAccount: (ns) => `/api/v1/namespaces/${ns}/serviceaccounts`,
  ConfigMap: (ns) => `/api/v1/namespaces/${ns}/configmaps`,
  ClusterRole: () => '/apis/rbac.authorization.k8s.io/v1/clusterroles',
  ClusterRoleBinding: () => '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
  Deployment: (ns) => `/apis/apps/v1/namespaces/${ns}/deployments`,
};

describe('infra/k8s/bridge manifests', () => {
  it('are accepted by the API server, and the ClusterRole is all the bridge needs', async () => {
    const directory = new URL('../../infra/k8s/bridge/', import.meta.url);
    const kustomization = parseYaml(readFileSync(new URL('kustomization.yaml', directory), 'utf8')) as {
      resources: string[];
    };
    const objects = kustomization.resources.flatMap((file) =>
      parseAllDocuments(readFileSync(new URL(file, directory), 'utf8')).map(
        (document) => document.toJS() as { kind: string; metadata: { namespace?: string } },
      ),
    );
    expect(objects.map((object) => object.kind).sort()).toEqual([
      'ClusterRole',
      'ClusterRoleBinding',
      'ConfigMap',
      'Deployment',
      'Namespace',
      'ServiceAccount',
    ]);
    // Identity and RBAC for real (the bridge runs as that ServiceAccount below); the rest as a dry run,
    // so no bridge pods are created.
    const real = new Set(['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding']);
    for (const kind of [
      'Namespace',
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'ConfigMap',
      'Deployment',
    ]) {
      for (const object of objects.filter((candidate) => candidate.kind === kind)) {
        const collection = collectionOf[kind];
        if (collection === undefined) throw new Error(`no collection path for ${kind}`);
        await postStrict(object, collection(object.metadata.namespace ?? ''), !real.has(kind));
      }
    }

    const deployment = objects.find((object) => object.kind === 'Deployment') as unknown as {
      spec: {
        template: {
          spec: { serviceAccountName: string; containers: { ports: { containerPort: number }[] }[] };
        };
      };
    };
    const configMap = objects.find((object) => object.kind === 'ConfigMap') as unknown as {
      data: Record<string, string>;
    };
    expect(String(deployment.spec.template.spec.containers[0]?.ports[0]?.containerPort)).toBe(
      configMap.data['BRIDGE_HEALTH_PORT'],
    );

    // A bridge with exactly the ServiceAccount's permissions syncs and publishes.
    const serviceAccount = `system:serviceaccount:nodeclaim-system:${deployment.spec.template.spec.serviceAccountName}`;
    const asServiceAccount = new KubeConfig();
    asServiceAccount.loadFromOptions({
      clusters: kubeConfig.clusters,
      contexts: kubeConfig.contexts,
      currentContext: kubeConfig.currentContext,
      users: kubeConfig.users.map((user) => ({ ...user, impersonateUser: serviceAccount })),
    });
    const queueName = `bridge-rbac-${suffix}`;
    const reader = new QueueReader(queueName);
    const bridge = await startBridge({
      queue: { mode: 'connectionString', connectionString, queueName },
      kubernetes: { mode: 'kubeConfig', kubeConfig: asServiceAccount },
      source: '/clusters/integration/event-bridge',
      watchBackoff: fastBackoff,
      queueBackoff: fastBackoff,
      logger: silentLogger,
    });
    try {
      await waitUntil(() => bridge.ready(), 'the bridge running as the ServiceAccount to be ready');
      const name = `bridge-rbac-${suffix}`;
      await createNodeClaim(name, aksRef);
      await reader.waitFor('NodeClaim', name, 'ADDED');
      expect(Object.values(bridge.stats().informers).every((informer) => informer.restarts === 0)).toBe(true);
    } finally {
      await bridge.stop();
    }
  });
});

describe('bridge/main.ts', () => {
  it('runs from the environment, publishes, and exits cleanly on SIGTERM after draining', async () => {
    const queueName = `bridge-main-${suffix}`;
    const reader = new QueueReader(queueName);
    const { KUBERNETES_SERVICE_HOST: _inCluster, ...inherited } = process.env;
    const child = spawn(process.execPath, ['--import', 'tsx', 'bridge/main.ts'], {
      cwd: new URL('../../', import.meta.url),
      env: {
        ...inherited,
        CLUSTER_NAME: 'integration',
        BRIDGE_QUEUE_NAME: queueName,
        BRIDGE_STORAGE_CONNECTION_STRING: connectionString,
        KUBECONFIG: inject('bridgeKubeconfigPath'),
        BRIDGE_HEALTH_PORT: '0',
        BRIDGE_LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const lines: Record<string, unknown>[] = [];
    let partial = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      partial += chunk;
      const complete = partial.split('\n');
      partial = complete.pop() ?? '';
      for (const line of complete)
        if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitUntil(
        () => lines.some((line) => line['message'] === 'event bridge started'),
        'the started log line',
      );
      const port = lines.find((line) => line['message'] === 'event bridge started')?.['healthPort'];
      expect(typeof port).toBe('number');
      await waitUntil(
        () => lines.filter((line) => line['message'] === 'informer synced').length === 5,
        'five synced informers',
      );
      let readyStatus = 0;
      for (let i = 0; i < 100 && readyStatus !== 200; i++) {
        readyStatus = (await fetch(`http://127.0.0.1:${String(port)}/readyz`)).status;
        if (readyStatus !== 200) await sleep(100);
      }
      expect(readyStatus).toBe(200);

      const name = `bridge-main-${suffix}`;
      await createNodeClaim(name, aksRef);
      const event = await reader.waitFor('NodeClaim', name, 'ADDED');
      expect(event.source).toBe('/clusters/integration/event-bridge');
      expect(
        lines.every((line) => line['component'] === 'event-bridge' && line['cluster'] === 'integration'),
      ).toBe(true);

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(lines.map((line) => line['message'])).toEqual(
        expect.arrayContaining(['shutting down', 'event bridge stopped; outbox drained']),
      );
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
