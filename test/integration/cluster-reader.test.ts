// The sweep's watch-fed cluster reader against the real kube-apiserver: one list, then only what changed;
// a watch that ends resumes from its last resourceVersion without a new list and without losing what
// happened meanwhile; an expired resourceVersion (410 Gone) leads to a fresh list; and the pooled
// KubeConfig reuses its connections. The readers run as the Function App's shipped identity (a role
// without `watch` would leave them with their first list), the test's writes as admin.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CoreV1Api, PolicyV1Api, type V1Pod } from '@kubernetes/client-node';
import { kubeClientsFromKubeconfig, type KubeClients } from '../../shared/kube/client.js';
import { karpenterObjects, type KarpenterObjects } from '../../shared/kube/custom-objects.js';
import { Reflector } from '../../shared/kube/reflector.js';
import { listingClusterReader, watchingClusterReader } from '../../shared/kube/cluster-reader.js';
import { kubeProvisioningReads } from '../../shared/kube/provisioning-reads.js';
import { provisionabilityOf } from '../../shared/lifecycle/provisioning/cluster-state.js';
import { schedulingPod } from '../../shared/lifecycle/provisioning/solve-input.js';
import type { NodeClaim } from '../../shared/models/index.js';
import { exampleRequirements, nodeClass, nodeClassRef, nodePool } from '../support/fixtures.js';
import { pollUntilDefined } from '../support/poll.js';
import { ApiServerRelay } from '../support/api-server-relay.js';

const suffix = Math.random().toString(36).slice(2, 8);
const group = `cluster-reader-${suffix}`;
const selector = `test.example/group=${group}`;

/** Admin: the test's set-up and assertions. */
let clients: KubeClients;
let objects: KarpenterObjects;
/** The Function App's identity: what the readers under test run as. */
let appClients: KubeClients;
let appObjects: KarpenterObjects;
const created: string[] = [];

beforeAll(() => {
  clients = kubeClientsFromKubeconfig(inject('kubeconfigPath'));
  objects = karpenterObjects(() => Promise.resolve(clients));
  appClients = kubeClientsFromKubeconfig(inject('functionsKubeconfigPath'));
  appObjects = karpenterObjects(() => Promise.resolve(appClients));
});

afterAll(async () => {
  for (const name of created) await objects.nodeClaims.delete(name).catch(() => undefined);
});

async function createNodeClaim(index: number, inGroup = group): Promise<NodeClaim> {
  const name = `${inGroup}-${index}`;
  created.push(name);
  return objects.nodeClaims.create({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: { name, labels: { 'test.example/group': inGroup } },
    spec: { nodeClassRef: nodeClassRef('cluster-reader'), requirements: exampleRequirements },
  });
}

const names = (items: readonly NodeClaim[]) => items.map((c) => c.metadata.name).sort();

/**
 * The fresh reads' timing in these tests. The shipped one (2 s at most; a watch of a few objects quiet
 * for 300 ms not waited for) suits a cluster whose events come many times a second; the churn here
 * pauses longer than 300 ms whenever the machine running every test file at once stalls a write, and the
 * read would then list, as it should, and the test could not tell whether it waited. A watch is still
 * never waited for once it has been quiet this long, so the quiet stream below is listed.
 */
const PATIENT_QUIET_MS = 3_000;
const patientFreshRead = { waitMs: 20_000, quietMs: () => PATIENT_QUIET_MS };

describe('watching cluster reader', () => {
  it('follows NodePools, AKSNodeClasses, Nodes and PodDisruptionBudgets created after its first read (their watches)', async () => {
    const kube = () => Promise.resolve(appClients);
    const watching = watchingClusterReader({ kube, objects: appObjects });
    const later = `${group}-later`;
    const policy = clients.config.makeApiClient(PolicyV1Api);
    try {
      await watching.read();
      await watching.workloads();
      await policy.createNamespacedPodDisruptionBudget({
        namespace: 'default',
        body: {
          metadata: { name: later },
          spec: { maxUnavailable: 1, selector: { matchLabels: { app: later } } },
        },
      });
      await objects.nodeClasses.create(nodeClass(later, 'Ubuntu2204'));
      await objects.nodePools.create(nodePool(later, later));
      await clients.core.createNode({ body: { metadata: { name: later } } });
      await pollUntilDefined(
        'the watches to deliver the new NodePool, AKSNodeClass, Node and PodDisruptionBudget',
        async () => {
          const read = await watching.read();
          const has = (items: readonly { metadata: { name?: string } }[]) =>
            items.some((item) => item.metadata.name === later);
          const { pdbs } = await watching.workloads();
          return has(read.nodePools) &&
            has(read.nodeClasses) &&
            has(read.nodes) &&
            pdbs.some((pdb) => pdb.name === later)
            ? true
            : undefined;
        },
        10_000,
      );
    } finally {
      watching.stop();
      await objects.nodePools.delete(later).catch(() => undefined);
      await objects.nodeClasses.delete(later).catch(() => undefined);
      await clients.core.deleteNode({ name: later }).catch(() => undefined);
      await policy
        .deleteNamespacedPodDisruptionBudget({ name: later, namespace: 'default' })
        .catch(() => undefined);
    }
  });

  it('reads what a full list reads, then follows changes through the watch without listing again', async () => {
    await createNodeClaim(0);
    await createNodeClaim(1);
    const kube = () => Promise.resolve(appClients);
    const watching = watchingClusterReader({ kube, objects: appObjects });
    try {
      const listed = await listingClusterReader({ kube, objects: appObjects }).read({
        nodeClaimSelector: selector,
      });
      const first = await watching.read({ nodeClaimSelector: selector });
      expect(names(first.nodeClaims)).toEqual(names(listed.nodeClaims));
      expect(first.nodeClaims.every((c) => !('managedFields' in c.metadata))).toBe(true);

      await createNodeClaim(2);
      await objects.nodeClaims.delete(`${group}-0`);
      await objects.nodeClaims.mergePatch(`${group}-1`, {
        metadata: { labels: { 'test.example/seen': 'yes' } },
      });
      const caughtUp = await pollUntilDefined(
        'the watch to deliver three changes',
        async () => {
          const read = await watching.read({ nodeClaimSelector: selector });
          const one = read.nodeClaims.find((c) => c.metadata.name === `${group}-1`);
          return names(read.nodeClaims).join() === `${group}-1,${group}-2` &&
            one?.metadata.labels?.['test.example/seen'] === 'yes'
            ? read
            : undefined;
        },
        10_000,
      );
      expect(names(caughtUp.nodeClaims)).toEqual([`${group}-1`, `${group}-2`]);
    } finally {
      watching.stop();
    }
  });
});

describe('watching cluster reader: a fresh read of selected objects', () => {
  it('answers from the watches once they caught up: a write made just before is in it, and nothing is listed', async () => {
    const kube = () => Promise.resolve(appClients);
    const watching = watchingClusterReader({ kube, objects: appObjects }, { freshRead: patientFreshRead });
    const fresh = `${group}-fresh`;
    const freshSelector = `test.example/group=${fresh}`;
    // Other NodeClaims keep changing meanwhile, as in a busy cluster: their events carry the watch past
    // the consistent list's resourceVersion.
    let churning = true;
    const churn = (async () => {
      for (let i = 0; churning; i += 1) {
        await createNodeClaim(100 + i).catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })();
    const selectedLists: string[] = [];
    const onRequest = (message: unknown) => {
      const { request } = message as { request: { path: string } };
      if (request.path.includes('labelSelector=')) selectedLists.push(request.path);
    };
    subscribe('undici:request:create', onRequest);
    try {
      await watching.read();
      const names: string[] = [];
      for (let i = 0; i < 3; i += 1) {
        names.push((await createNodeClaim(i, fresh)).metadata.name);
        // Read right after the write: the watches may not have delivered it yet, the read must wait.
        const read = await watching.readSelectedFresh(freshSelector);
        expect(read.sources.nodeClaims).toBe('cache');
        expect(read.nodeClaims.map((c) => c.metadata.name).sort()).toEqual([...names].sort());
      }

      expect(selectedLists.filter((path) => path.includes('/nodeclaims'))).toEqual([]);

      // A quiet stream (nothing of the kind changes, so waiting for the watch would be in vain): the
      // selected objects are listed, and the answer is still complete. Other test files may write
      // NodeClaims meanwhile, so the source is not asserted here.
      churning = false;
      await churn;
      await new Promise((resolve) => setTimeout(resolve, PATIENT_QUIET_MS + 500));
      const quiet = await watching.readSelectedFresh(freshSelector);
      expect(quiet.nodeClaims.map((c) => c.metadata.name).sort()).toEqual([...names].sort());
    } finally {
      churning = false;
      await churn;
      unsubscribe('undici:request:create', onRequest);
      watching.stop();
    }
  });
});

describe('watching cluster reader: a provisioning window’s fresh reads', () => {
  it('answers from the caches caught up: a NodeClaim and a pod written just before are in it, as a list has them', async () => {
    const kube = () => Promise.resolve(appClients);
    const watching = watchingClusterReader({ kube, objects: appObjects }, { freshRead: patientFreshRead });
    const cachedReads = kubeProvisioningReads({ kube, objects: appObjects }, watching);
    const listedReads = kubeProvisioningReads({ kube, objects: appObjects });
    const window = `${group}-window`;
    const podNames: string[] = [];
    const gatedPod = async (name: string, extra: Partial<V1Pod['spec']> = {}) => {
      podNames.push(name);
      await clients.core.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: { name, labels: { 'test.example/group': window } },
          spec: {
            // Held back from the scheduler, so nothing but this test changes it.
            schedulingGates: [{ name: 'test.example/hold' }],
            containers: [
              { name: 'c', image: 'example.invalid/none', resources: { requests: { cpu: '175m' } } },
            ],
            ...extra,
          },
        },
      });
    };
    // A busy cluster: NodeClaims and pods keep changing, so both watches move past any version.
    let churning = true;
    const churn = (async () => {
      for (let i = 0; churning; i += 1) {
        await Promise.all([
          createNodeClaim(1000 + i).catch(() => undefined),
          gatedPod(`${window}-churn-${i}`).catch(() => undefined),
        ]);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })();
    try {
      await cachedReads.cluster();
      await cachedReads.pods();
      for (let i = 0; i < 3; i += 1) {
        const claim = await createNodeClaim(i, window);
        const pod = `${window}-pending-${i}`;
        await gatedPod(pod);
        // Read right after the writes, nodes before pods as the window reads: the caches must wait.
        const cluster = await cachedReads.cluster();
        expect(cluster.sources?.nodeClaims).toBe('cache');
        expect(cluster.nodeClaims.map((c) => c.metadata.name)).toContain(claim.metadata.name);
        const pods = await cachedReads.pods();
        expect(pods.fromCache).toBe(true);
        expect(pods.unbound.map((p) => p.metadata?.name)).toContain(pod);
      }

      // What the window derives from a pod is the same from the cache as from the list.
      const bound = `${window}-bound`;
      podNames.push(bound);
      await clients.core.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: { name: bound, labels: { 'test.example/group': window } },
          spec: {
            nodeName: `${group}-no-such-node`,
            containers: [{ name: 'c', image: 'example.invalid/none' }],
          },
        },
      });
      const [cached, listed] = [await cachedReads.pods(), await listedReads.pods()];
      expect(listed.fromCache).toBe(false);
      const ours = (pods: V1Pod[]) =>
        pods
          .filter(
            (p) =>
              p.metadata?.labels?.['test.example/group'] === window && !p.metadata.name?.includes('churn'),
          )
          .map((p) => ({ scheduling: schedulingPod(p), provisionability: provisionabilityOf(p) }))
          .sort((a, b) => a.scheduling.metadata.name.localeCompare(b.scheduling.metadata.name));
      expect(ours(cached.unbound)).toEqual(ours(listed.unbound));
      expect(ours(cached.unbound)).toHaveLength(3);
      expect(ours(cached.bound)).toEqual(ours(listed.bound));
      expect(ours(cached.bound)).toHaveLength(1);
    } finally {
      churning = false;
      await churn;
      watching.stop();
      await Promise.all(
        podNames.map((name) =>
          clients.core
            .deleteNamespacedPod({ namespace: 'default', name, gracePeriodSeconds: 0 })
            .catch(() => undefined),
        ),
      );
    }
  });
});

describe('watching cluster reader: workloads', () => {
  it('caches pods in their slim form and follows their changes', async () => {
    const kube = () => Promise.resolve(appClients);
    const watching = watchingClusterReader({ kube, objects: appObjects });
    const pod = `${group}-pod`;
    try {
      const before = await watching.workloads();
      expect(before.pods.some((p) => p.name === pod)).toBe(false);
      await clients.core.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: { name: pod, labels: { 'test.example/group': group } },
          spec: {
            // Held back from the scheduler (and so from provisioning), so nothing changes it while the
            // test compares what the watch and a list see.
            schedulingGates: [{ name: 'test.example/hold' }],
            containers: [
              { name: 'c', image: 'example.invalid/none', resources: { requests: { cpu: '250m' } } },
            ],
          },
        },
      });
      const seen = await pollUntilDefined('the pod through the watch', async () =>
        (await watching.workloads()).pods.find((p) => p.name === pod),
      );
      expect(seen).toMatchObject({ namespace: 'default', labels: { 'test.example/group': group } });
      // Requests in the scheduling simulation's units: millicores for cpu.
      expect(seen.requests?.['cpu']).toBe(250);
      const listed = await listingClusterReader({ kube, objects: appObjects }).workloads();
      expect(listed.pods.find((p) => p.name === pod)).toEqual(seen);
    } finally {
      watching.stop();
      await clients.core
        .deleteNamespacedPod({ namespace: 'default', name: pod, gracePeriodSeconds: 0 })
        .catch(() => undefined);
    }
  });
});

describe('watching cluster reader: pod events', () => {
  it('stamps a pod event on the Node a pod binds to, and again when it is removed', async () => {
    const kube = () => Promise.resolve(appClients);
    const watching = watchingClusterReader({ kube, objects: appObjects });
    const pod = `${group}-bound`;
    // A Node name no kubelet serves: nothing but this test changes the pod.
    const nodeName = `${group}-no-such-node`;
    try {
      expect((await watching.workloads()).podEventTimes.has(nodeName)).toBe(false);
      const beforeBind = Date.now();
      await clients.core.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: { name: pod, labels: { 'test.example/group': group } },
          spec: { nodeName, containers: [{ name: 'c', image: 'example.invalid/none' }] },
        },
      });
      const bound = await pollUntilDefined('the bind as a pod event', async () =>
        (await watching.workloads()).podEventTimes.get(nodeName),
      );
      expect(bound).toBeGreaterThanOrEqual(beforeBind);
      // The listing reader has no watch and so no event times: the sweep's digest is its only source.
      expect((await listingClusterReader({ kube, objects: appObjects }).workloads()).podEventTimes.size).toBe(
        0,
      );

      await clients.core.deleteNamespacedPod({ namespace: 'default', name: pod, gracePeriodSeconds: 0 });
      const removed = await pollUntilDefined('the removal as a pod event', async () => {
        const read = await watching.workloads();
        const at = read.podEventTimes.get(nodeName);
        return !read.pods.some((p) => p.name === pod) && at !== undefined && at > bound ? at : undefined;
      });
      expect(removed).toBeGreaterThan(bound);
    } finally {
      watching.stop();
      await clients.core
        .deleteNamespacedPod({ namespace: 'default', name: pod, gracePeriodSeconds: 0 })
        .catch(() => undefined);
    }
  });
});

describe('reflector', () => {
  const nodeClaimSource = (overrideVersion?: string) => ({
    path: objects.nodeClaims.collectionPath,
    listPage: async (token: string | undefined, limit: number) => {
      const page = await appObjects.nodeClaims.listPage(token, limit, selector);
      return overrideVersion === undefined ? page : { ...page, resourceVersion: overrideVersion };
    },
    kubeConfig: () => Promise.resolve(appClients.config),
  });

  it('resumes a watch that ended from its last resourceVersion, missing nothing and listing once', async () => {
    const reflector = new Reflector<NodeClaim, NodeClaim>({
      name: 'nodeclaims',
      source: nodeClaimSource(),
      project: (c) => c,
      keyOf: (c) => c.metadata.name,
      // The server ends every watch after a second: objects created across those ends must all arrive.
      watchTimeoutSeconds: 1,
    });
    try {
      await reflector.items();
      for (let i = 10; i < 16; i += 1) {
        await createNodeClaim(i);
        await new Promise((resolve) => setTimeout(resolve, 400));
      }
      await pollUntilDefined(
        'six NodeClaims across watch restarts',
        async () => {
          const items = await reflector.items();
          return items.filter(
            (c) => c.metadata.labels?.['test.example/group'] === group && /-1\d$/.test(c.metadata.name),
          ).length === 6
            ? true
            : undefined;
        },
        10_000,
      );
      expect(reflector.stats.lists).toBe(1);
      expect(reflector.stats.watches).toBeGreaterThan(1);
    } finally {
      reflector.stop();
    }
  });

  it('answers itemsAsOf only once the watch has delivered every change up to the version asked', async () => {
    // The watch reaches the API server through a relay that is cut after the first read: a NodeClaim
    // created meanwhile is in a consistent list at once, but reaches the cache only when the watch is back.
    const relay = await ApiServerRelay.toServerOf(inject('functionsKubeconfigPath'));
    await relay.up();
    const relayed = kubeClientsFromKubeconfig(
      await relay.kubeconfigThrough(inject('functionsKubeconfigPath')),
    );
    const reflector = new Reflector<NodeClaim, NodeClaim>({
      name: 'nodeclaims',
      source: { ...nodeClaimSource(), kubeConfig: () => Promise.resolve(relayed.config) },
      project: (c) => c,
      keyOf: (c) => c.metadata.name,
    });
    try {
      await reflector.items();
      // An event within the wait, so the reflector waits rather than answers "quiet" at once.
      await createNodeClaim(30);
      await pollUntilDefined('the first NodeClaim in the cache', async () =>
        (await reflector.items()).some((c) => c.metadata.name === `${group}-30`) ? true : undefined,
      );
      await relay.down();
      const late = await createNodeClaim(31);
      const { resourceVersion } = await appObjects.nodeClaims.listPage(undefined, 1);
      // Quiet allowed as long as the wait: the relay is down, so nothing comes until it is back.
      const asOf = reflector.itemsAsOf(resourceVersion ?? '', 8_000, 8_000);
      setTimeout(() => void relay.up(), 1_500);
      const caughtUp = await asOf;
      expect(caughtUp).not.toHaveProperty('missed');
      const items = 'items' in caughtUp ? caughtUp.items : [];
      expect(items.map((c) => c.metadata.name)).toContain(late.metadata.name);
    } finally {
      reflector.stop();
      await relay.up();
    }
  });

  it('lists again when the server no longer has the resourceVersion (410 Gone)', async () => {
    // The list claims resourceVersion 1, older than anything the API server keeps: its watch answers
    // 410 Gone, as after etcd compaction, and the next read must list afresh.
    let lists = 0;
    const source = nodeClaimSource('1');
    const reflector = new Reflector<NodeClaim, NodeClaim>({
      name: 'nodeclaims',
      source: {
        ...source,
        listPage: (token, limit) => {
          lists += 1;
          return source.listPage(token, limit);
        },
      },
      project: (c) => c,
      keyOf: (c) => c.metadata.name,
    });
    try {
      await reflector.items();
      await pollUntilDefined(
        'a second list after 410 Gone',
        async () => {
          await reflector.items();
          return lists >= 2 ? true : undefined;
        },
        10_000,
      );
      expect(reflector.stats.lists).toBeGreaterThanOrEqual(2);
    } finally {
      reflector.stop();
    }
  });
  it('loses no deletion made while a resync lists (no watch runs beside the list)', async () => {
    // The resync's list is held after the server answered it, with the NodeClaim still in it, while the
    // NodeClaim is deleted. A watch running beside the list (the one the relist aborted, reopened from the
    // old resourceVersion) would apply the deletion before the list's result replaced the cache, and go on
    // past it: the cache would keep the deleted NodeClaim until the next resync. The watch after the list
    // must start from the list's resourceVersion and deliver the deletion.
    let clock = 0;
    let hold: { listed: () => void; release: Promise<void> } | undefined;
    const source = nodeClaimSource();
    const deliveredDeletions: string[] = [];
    const reflector = new Reflector<NodeClaim, NodeClaim>({
      name: 'nodeclaims',
      source: {
        ...source,
        listPage: async (token, limit) => {
          const page = await source.listPage(token, limit);
          const gate = hold;
          hold = undefined;
          if (gate) {
            gate.listed();
            await gate.release;
          }
          return page;
        },
      },
      project: (c) => c,
      keyOf: (c) => c.metadata.name,
      now: () => clock,
      resyncIntervalMs: 60_000,
      onChange: (previous, next) => {
        if (previous && !next) deliveredDeletions.push(previous.metadata.name);
      },
    });
    const doomed = (await createNodeClaim(20)).metadata.name;
    const cached = async () => (await reflector.items()).some((c) => c.metadata.name === doomed);
    try {
      await pollUntilDefined('the NodeClaim in the cache', async () => ((await cached()) ? true : undefined));
      let listed = (): void => undefined;
      let release = (): void => undefined;
      const wasListed = new Promise<void>((resolve) => (listed = resolve));
      hold = { listed, release: new Promise<void>((resolve) => (release = resolve)) };
      clock = 60_000;
      const resync = reflector.items();
      await wasListed;
      await objects.nodeClaims.delete(doomed);
      // Time for a watch beside the list to deliver the deletion, if one ran (the fault this guards).
      for (let i = 0; i < 30 && !deliveredDeletions.includes(doomed); i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      release();
      await resync;
      await pollUntilDefined(
        'the deletion in the cache',
        async () => ((await cached()) ? undefined : true),
        10_000,
      );
      expect(reflector.stats.lists).toBe(2);
    } finally {
      reflector.stop();
    }
  });
});

describe('pooled KubeConfig', () => {
  it('makes many requests over one connection', async () => {
    let connections = 0;
    const count = () => {
      connections += 1;
    };
    subscribe('undici:client:connected', count);
    try {
      const core = kubeClientsFromKubeconfig(inject('kubeconfigPath')).config.makeApiClient(CoreV1Api);
      for (let i = 0; i < 10; i += 1) await core.listNamespace({ limit: 1 });
      expect(connections).toBe(1);
    } finally {
      unsubscribe('undici:client:connected', count);
    }
  });
});
