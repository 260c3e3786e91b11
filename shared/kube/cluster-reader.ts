// How a sweep learns the cluster's state. Two readers with one contract:
//
// - `watchingClusterReader` (the default in the Function App and the local stack): one watch-fed cache
//   per kind (NodeClaims, Nodes, NodePools, AKSNodeClasses, and the pods and PodDisruptionBudgets
//   consolidation reads), kept in the process between sweeps, each opened the first time it is read. A steady cluster costs no reads at all: the watches
//   carry only what changed, Nodes are cached in their slim domain form, and the full paginated list
//   happens once per process, after a 410 Gone, and every 30 minutes as a safety net. The cache is
//   eventually consistent, as Karpenter's informers are: every write the steps make is guarded by the
//   resourceVersion it was computed from, so a stale read costs a conflict and a retry, never a wrong
//   write, and the bridge's events do the prompt work in any case.
// - `listingClusterReader`: every kind listed in full, in pages, on every sweep. Its reads see every
//   write made before them, which is what tests that assert the effect of one sweep right after a
//   write need.
import type { KubeConfig, V1Node, V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { PdbLimit } from '../decisions/consolidation/pdb.js';
import type { ConsolidationPod } from '../decisions/consolidation/pods.js';
import { podEventNode } from '../decisions/consolidation/pod-events.js';
import { isLaunchInFlight } from '../decisions/launch-in-flight.js';
import { labelsMatch } from '../decisions/label-selector.js';
import type { KubeClients } from './client.js';
import type { CustomObjects, KarpenterObjects } from './custom-objects.js';
import { listLabelledNodes, listNodes, listNodesPage, toDomainNode } from './nodes.js';
import {
  listConsolidationPods,
  listPdbLimits,
  listPdbsPage,
  listPodsPage,
  toConsolidationPod,
  toPdbLimit,
} from './pods.js';
import { LIST_PAGE_SIZE } from './paging.js';
import { Reflector, type FreshItems, type FreshMiss } from './reflector.js';
import type { AKSNodeClass, NodeClaim, NodePool } from '../models/index.js';
import type { Node } from '../models/kube.js';

export interface ClusterState {
  nodeClaims: readonly NodeClaim[];
  nodes: readonly Node[];
  nodePools: readonly NodePool[];
  nodeClasses: readonly AKSNodeClass[];
}

/** Pods as consolidation reads them, and the PodDisruptionBudgets that guard them. */
export interface ClusterWorkloads {
  pods: readonly ConsolidationPod[];
  pdbs: readonly PdbLimit[];
  /**
   * When the pod watch last saw a pod event (decisions/consolidation/pod-events.ts) on each Node, by Node
   * name, in ms since the epoch; empty for a reader without a pod watch.
   */
  podEventTimes: ReadonlyMap<string, number>;
}

export interface ClusterReader {
  /** `nodeClaimSelector` narrows the NodeClaims to a label selector (see readClusterSnapshot). */
  read(options?: { nodeClaimSelector?: string }): Promise<ClusterState>;
  /** Every pod and PodDisruptionBudget (consolidation's input); the watching reader caches them too. */
  workloads(): Promise<ClusterWorkloads>;
  /**
   * NodeClaims whose VM is still being created, in the whole cluster. The watching reader answers from
   * its NodeClaim cache alone (it opens no other watch for this).
   */
  launchesInFlight(): Promise<number>;
  /**
   * The NodeClaims and Nodes a label selector selects, with every write made before the call in them (a
   * budget read under the disruption-marks Lease needs that). The watching reader answers from its caches
   * once they have caught up with a consistent list's resourceVersion (a list one object long, as the API
   * server serves a consistent read from its watch cache), and lists the selected objects of a kind whose
   * watch has not within FRESH_CACHE_WAIT_MS, or has been quiet for freshCacheQuietMs; `sources`
   * says which, and why a kind was listed.
   */
  readSelectedFresh(labelSelector: string): Promise<SelectedObjects>;
  /**
   * Every kind of the ClusterState with every write made before the call in it, as a provisioning window
   * must read them (it must see the NodeClaims the window before it created). NodeClaims and Nodes come
   * from their caches caught up as readSelectedFresh's do, or from a full list; `sources` says which.
   * NodePools and AKSNodeClasses are always listed.
   */
  readFresh(): Promise<FreshClusterState>;
  /**
   * Every pod with every write made before the call in it, from the pod cache caught up; undefined when
   * the reader keeps no pod cache or it did not catch up, and the caller lists what it needs instead.
   */
  podsFresh(): Promise<readonly ConsolidationPod[] | undefined>;
  /** Closes whatever the reader keeps open (watches). */
  stop(): void;
}

/** Where a fresh read took a kind from: its cache caught up, or a list, and why not the cache. */
export type FreshSource = 'cache' | FreshMiss;

export interface FreshSources {
  nodeClaims: FreshSource;
  nodes: FreshSource;
}

export interface FreshClusterState extends ClusterState {
  sources: FreshSources;
}

export interface SelectedObjects {
  nodeClaims: NodeClaim[];
  nodes: Node[];
  sources: FreshSources;
}

/**
 * How long a fresh read waits for the watches to catch up before it lists instead. At 1,000 nodes the
 * NodeClaims and Nodes of one NodePool were 4 MB each and their lists took 2-11 s on a busy API server;
 * while the cluster changes the watches catch up in well under this.
 */
export const FRESH_CACHE_WAIT_MS = 2_000;

/**
 * A watch that has delivered nothing of its kind for this long is not waited for: in a small or steady
 * cluster the next event may be minutes away, and the list is cheap there.
 */
export const FRESH_CACHE_QUIET_MS = 300;

/** The longest quiet time a large cache is given (freshCacheQuietMs). */
export const FRESH_CACHE_QUIET_MAX_MS = 1_500;

/**
 * How long a watch may have been quiet and still be waited for, by how many objects its cache holds: the
 * list a miss costs instead grows with them. A cache gets to "now" only with an event written after it,
 * which comes at the rate its kind changes; at 1,000 nodes a drift's NodeClaim and Node events came a few
 * a second, a 300 ms quiet time missed about a quarter of the marks rounds' reads, and each miss listed a
 * NodePool's objects for seconds. 2 ms an object: 300 ms up to 150 objects, 1.5 s from 750.
 */
export function freshCacheQuietMs(cached: number): number {
  return Math.min(FRESH_CACHE_QUIET_MAX_MS, Math.max(FRESH_CACHE_QUIET_MS, 2 * cached));
}

export const FULL_RESYNC_MS = 30 * 60_000;
const POD_EVENT_RETENTION_MS = 60 * 60_000;

interface Sources {
  kube: () => Promise<KubeClients>;
  objects: KarpenterObjects;
}

export function listingClusterReader({ kube, objects }: Sources): ClusterReader {
  const read = async (options: { nodeClaimSelector?: string } = {}): Promise<ClusterState> => {
    const { core } = await kube();
    const [nodeClaims, nodes, nodePools, nodeClasses] = await Promise.all([
      objects.nodeClaims.list(options.nodeClaimSelector ? { labelSelector: options.nodeClaimSelector } : {}),
      listNodes(core),
      objects.nodePools.list(),
      objects.nodeClasses.list(),
    ]);
    return { nodeClaims, nodes, nodePools, nodeClasses };
  };
  return {
    read,
    async workloads() {
      const clients = await kube();
      const [pods, pdbs] = await Promise.all([listConsolidationPods(clients), listPdbLimits(clients)]);
      return { pods, pdbs, podEventTimes: new Map() };
    },
    async launchesInFlight() {
      return (await objects.nodeClaims.list()).filter(isLaunchInFlight).length;
    },
    readSelectedFresh: async (labelSelector) => listSelected({ kube, objects }, labelSelector),
    readFresh: async () => ({ ...(await read()), sources: { nodeClaims: 'uncached', nodes: 'uncached' } }),
    podsFresh: async () => undefined,
    stop() {},
  };
}

async function listSelected({ kube, objects }: Sources, labelSelector: string): Promise<SelectedObjects> {
  const { core } = await kube();
  const [nodeClaims, nodes] = await Promise.all([
    objects.nodeClaims.list({ labelSelector }),
    listLabelledNodes(core, labelSelector),
  ]);
  return { nodeClaims, nodes, sources: { nodeClaims: 'uncached', nodes: 'uncached' } };
}

/** managedFields are often the largest part of an object's metadata, and nothing here reads them. */
export function withoutManagedFields<T extends { metadata: object }>(object: T): T {
  if (!('managedFields' in object.metadata)) return object;
  const { managedFields: _dropped, ...metadata } = object.metadata as { managedFields?: unknown };
  return { ...object, metadata } as T;
}

const nameKey = (object: { metadata?: { name?: string } }): string => object.metadata?.name ?? '';

export function watchingClusterReader(
  { kube, objects }: Sources,
  options: {
    resyncIntervalMs?: number;
    onError?: (error: unknown) => void;
    /** The fresh reads' timing; tests on a loaded machine give the watches longer. */
    freshRead?: FreshReadTiming;
  } = {},
): ClusterReader {
  const freshRead = options.freshRead ?? FRESH_READ_TIMING;
  const kubeConfig = async (): Promise<KubeConfig> => (await kube()).config;
  const common = {
    keyOf: nameKey,
    pageSize: LIST_PAGE_SIZE,
    resyncIntervalMs: options.resyncIntervalMs ?? FULL_RESYNC_MS,
    ...(options.onError ? { onError: options.onError } : {}),
  };
  const customReflector = <T extends { metadata: { name: string } }>(
    name: string,
    collection: CustomObjects<T>,
  ) =>
    new Reflector<T, T>({
      ...common,
      name,
      project: withoutManagedFields,
      source: {
        path: collection.collectionPath,
        listPage: (token, limit) => collection.listPage(token, limit),
        kubeConfig,
      },
    });
  const nodeClaims = customReflector<NodeClaim>('nodeclaims', objects.nodeClaims);
  const nodePools = customReflector<NodePool>('nodepools', objects.nodePools);
  const nodeClasses = customReflector<AKSNodeClass>('aksnodeclasses', objects.nodeClasses);
  const nodes = new Reflector<V1Node, Node>({
    ...common,
    name: 'nodes',
    // Watch events arrive as plain JSON; toDomainNode reads both that and the client's models.
    project: toDomainNode,
    source: {
      path: '/api/v1/nodes',
      listPage: async (token, limit) => listNodesPage((await kube()).core, token, limit),
      kubeConfig,
    },
  });
  const namespacedKey = (object: { metadata?: { namespace?: string; name?: string } }) =>
    `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
  const podEventTimes = new PodEventTimes();
  const pods = new Reflector<V1Pod, ConsolidationPod>({
    ...common,
    keyOf: namespacedKey,
    name: 'pods',
    project: toConsolidationPod,
    onChange: (previous, next) => podEventTimes.record(podEventNode(previous, next)),
    source: {
      path: '/api/v1/pods',
      listPage: async (token, limit) => listPodsPage(await kube(), token, limit),
      kubeConfig,
    },
  });
  const pdbs = new Reflector<V1PodDisruptionBudget, PdbLimit>({
    ...common,
    keyOf: namespacedKey,
    name: 'poddisruptionbudgets',
    project: toPdbLimit,
    source: {
      path: '/apis/policy/v1/poddisruptionbudgets',
      listPage: async (token, limit) => listPdbsPage(await kube(), token, limit),
      kubeConfig,
    },
  });
  const reflectors = [nodeClaims, nodePools, nodeClasses, nodes, pods, pdbs];
  return {
    async read(readOptions = {}) {
      const [allNodeClaims, nodeList, nodePoolList, nodeClassList] = await Promise.all([
        nodeClaims.items(),
        nodes.items(),
        nodePools.items(),
        nodeClasses.items(),
      ]);
      const selector = readOptions.nodeClaimSelector;
      return {
        nodeClaims: selector
          ? allNodeClaims.filter((c) => labelsMatch(selector, c.metadata.labels ?? {}))
          : allNodeClaims,
        nodes: nodeList,
        nodePools: nodePoolList,
        nodeClasses: nodeClassList,
      };
    },
    async workloads() {
      const [podList, pdbList] = await Promise.all([pods.items(), pdbs.items()]);
      return { pods: podList, pdbs: pdbList, podEventTimes: podEventTimes.current() };
    },
    async launchesInFlight() {
      return (await nodeClaims.items()).filter(isLaunchInFlight).length;
    },
    async readFresh() {
      const { core } = await kube();
      // NodePools and classes change rarely: their watches are quiet, so waiting for them would be in
      // vain and they are listed (one request each) rather than asked for a version first.
      const [claims, nodeList, poolList, classList] = await Promise.all([
        cachedOrListed(
          nodeClaims,
          () => objects.nodeClaims.listPage(undefined, 1),
          () => objects.nodeClaims.list(),
          freshRead,
        ),
        cachedOrListed(
          nodes,
          () => listNodesPage(core, undefined, 1),
          () => listNodes(core),
          freshRead,
        ),
        objects.nodePools.list(),
        objects.nodeClasses.list(),
      ]);
      return {
        nodeClaims: claims.items,
        nodes: nodeList.items,
        nodePools: poolList,
        nodeClasses: classList,
        sources: { nodeClaims: claims.source, nodes: nodeList.source },
      };
    },
    async podsFresh() {
      const clients = await kube();
      const cached = await cachedAsOfNow(pods, () => listPodsPage(clients, undefined, 1), freshRead);
      return 'items' in cached ? cached.items : undefined;
    },
    async readSelectedFresh(labelSelector) {
      const { core } = await kube();
      const selected = <T extends { metadata: { labels?: Record<string, string> } }>(items: T[]) =>
        items.filter((item) => labelsMatch(labelSelector, item.metadata.labels ?? {}));
      const [claims, nodeList] = await Promise.all([
        cachedOrListed(
          nodeClaims,
          () => objects.nodeClaims.listPage(undefined, 1),
          () => objects.nodeClaims.list({ labelSelector }),
          freshRead,
        ),
        cachedOrListed(
          nodes,
          () => listNodesPage(core, undefined, 1),
          () => listLabelledNodes(core, labelSelector),
          freshRead,
        ),
      ]);
      return {
        nodeClaims: claims.source === 'cache' ? selected(claims.items) : claims.items,
        nodes: nodeList.source === 'cache' ? selected(nodeList.items) : nodeList.items,
        sources: { nodeClaims: claims.source, nodes: nodeList.source },
      };
    },
    stop() {
      for (const reflector of reflectors) reflector.stop();
    },
  };
}

/** How long a fresh read waits for a watch to catch up, and how quiet a watch may be to be waited for. */
export interface FreshReadTiming {
  waitMs: number;
  /** By the number of objects the kind's cache holds. */
  quietMs: (cached: number) => number;
}

const FRESH_READ_TIMING: FreshReadTiming = { waitMs: FRESH_CACHE_WAIT_MS, quietMs: freshCacheQuietMs };

/**
 * The reflector's objects once it has seen every change up to now, now being a consistent list's
 * resourceVersion (the list one object long); or why it did not get there in time.
 */
async function cachedAsOfNow<T>(
  reflector: Pick<Reflector<unknown, T>, 'itemsAsOf' | 'stats'>,
  readVersion: () => Promise<{ resourceVersion?: string }>,
  timing: FreshReadTiming,
): Promise<FreshItems<T>> {
  const { resourceVersion } = await readVersion();
  return resourceVersion
    ? reflector.itemsAsOf(resourceVersion, timing.waitMs, timing.quietMs(reflector.stats.cached))
    : { missed: 'incomparable' };
}

/** The reflector's objects caught up with now (cachedAsOfNow), or else what `list` lists, and which. */
async function cachedOrListed<T>(
  reflector: Pick<Reflector<unknown, T>, 'itemsAsOf' | 'stats'>,
  readVersion: () => Promise<{ resourceVersion?: string }>,
  list: () => Promise<T[]>,
  timing: FreshReadTiming,
): Promise<{ items: T[]; source: FreshSource }> {
  const cached = await cachedAsOfNow(reflector, readVersion, timing);
  return 'items' in cached
    ? { items: cached.items, source: 'cache' }
    : { items: await list(), source: cached.missed };
}

/**
 * Pod event times by Node name, as the watch delivered them. An entry is needed only until a sweep has
 * written it onto the NodeClaim (status.lastPodEventTime), so entries older than a retention far above
 * any sweep period are dropped: the memory stays bounded by the Nodes with recent pod events.
 */
class PodEventTimes {
  private readonly times = new Map<string, number>();

  constructor(
    private readonly retentionMs = POD_EVENT_RETENTION_MS,
    private readonly now: () => number = Date.now,
  ) {}

  record(nodeName: string | undefined): void {
    if (nodeName) this.times.set(nodeName, this.now());
  }

  current(): ReadonlyMap<string, number> {
    const oldest = this.now() - this.retentionMs;
    for (const [nodeName, at] of this.times) if (at < oldest) this.times.delete(nodeName);
    return new Map(this.times);
  }
}
