// In-memory fakes of LifecycleDependencies and the orchestration client, for fast unit tests of one
// lifecycle phase or sweep step at a time (as Karpenter tests each sub-reconciler on its own). They keep
// the contracts the phases rely on and nothing more: custom objects with resourceVersions (a write with a
// stale one gets 409, as the API server answers), deletion that waits for finalizers, orchestration
// instances with a runtime status. Anything a test did not fake throws when touched, so a phase that
// starts doing new I/O fails loudly instead of passing against a silent stub. Behaviour across the real
// API server, ARM and the Durable engine is covered by the integration tests.
import { MemoryDecisionRecords } from './memory-decision-records.js';
import { readFileSync } from 'node:fs';
import type { V1DaemonSet } from '@kubernetes/client-node';
import { localClusterSettings } from '../../local/stack/app-settings.js';
import type { ResourceSkuCatalog } from '../../shared/azure/resource-skus.js';
import type { UnavailableOffering } from '../../shared/azure/unavailable-offerings.js';
import { FakeApiError } from './fake-api-error.js';
import { FakeCloudProvider } from './fake-cloud-provider.js';
import { FakeCapacityBuffers } from './fake-capacity-buffers.js';
import { FakeLeases } from './fake-leases.js';
import { FakeNodes } from './fake-nodes.js';
import { equalitySelector } from './label-selector.js';
import { mergePatch } from './merge-patch.js';
import { FakePods } from './fake-pods.js';
import { loadSettings, type Settings } from '../../shared/config/settings.js';
import type { SkuRecord } from '../../shared/decisions/offerings.js';
import type { PdbLimit } from '../../shared/decisions/consolidation/pdb.js';
import type { ConsolidationPod } from '../../shared/decisions/consolidation/pods.js';
import type { CustomObjects, KarpenterObjects } from '../../shared/kube/custom-objects.js';
import type { EventRecorder, EventTarget } from '../../shared/kube/events.js';
import type { LifecycleDependencies } from '../../shared/lifecycle/dependencies.js';
import type { ClusterReader, ClusterState } from '../../shared/kube/cluster-reader.js';
import { createLeftoverMemory } from '../../shared/lifecycle/sweep-step/leftover-memory.js';
import { SweepView } from '../../shared/lifecycle/cluster/snapshot.js';
import type { SweepContext } from '../../shared/lifecycle/sweep-step/sweep-step.js';
import type { AKSNodeClass, NodeClaim, NodePool } from '../../shared/models/index.js';
import { silentLogger } from '../../shared/observability/logger.js';
import { createMetrics } from '../../shared/observability/metrics.js';
import type {
  OrchestrationClient,
  OrchestrationRuntimeStatus,
  OrchestrationStatus,
} from '../../shared/runtime/definitions.js';

type KubeObject = {
  metadata: {
    name: string;
    labels?: Record<string, string>;
    uid?: string;
    resourceVersion?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
  };
};

const clone = <T>(value: T): T => structuredClone(value);

/** One kind's objects, with the parts of CustomObjects' contract the lifecycle relies on. */
export class FakeObjects<T extends KubeObject> {
  private readonly objects = new Map<string, T>();
  private version = 0;
  /** Every write the store accepted, in order (not a refused one): what a test asserts a phase did. */
  readonly writes: { verb: 'create' | 'patch' | 'patchStatus' | 'delete'; name: string }[] = [];

  constructor(private readonly kind: string) {}

  /** Puts an object as the API server would hold it (a fresh resourceVersion, a uid if it had none). */
  seed(object: T): T {
    const stored = clone(object);
    stored.metadata.uid ??= `uid-${stored.metadata.name}`;
    stored.metadata.resourceVersion = String(++this.version);
    this.objects.set(stored.metadata.name, stored);
    return clone(stored);
  }

  peek(name: string): T | undefined {
    const object = this.objects.get(name);
    return object ? clone(object) : undefined;
  }

  async get(name: string): Promise<T | undefined> {
    return this.peek(name);
  }

  /** Every object, or those an equality label selector (label-selector.ts) selects. */
  async list(options: { labelSelector?: string } = {}): Promise<T[]> {
    const selects = options.labelSelector ? equalitySelector(options.labelSelector) : () => true;
    return [...this.objects.values()].filter((object) => selects(object.metadata.labels)).map(clone);
  }

  async create(object: T): Promise<T> {
    if (this.objects.has(object.metadata.name)) {
      throw new FakeApiError(409, `${this.kind} ${object.metadata.name} already exists`);
    }
    this.writes.push({ verb: 'create', name: object.metadata.name });
    return this.seed(object);
  }

  async mergePatch(name: string, patch: object): Promise<T> {
    const stored = this.patch(name, patch);
    this.writes.push({ verb: 'patch', name });
    return stored;
  }

  async mergePatchStatus(name: string, patch: object): Promise<T> {
    const stored = this.patch(name, patch);
    this.writes.push({ verb: 'patchStatus', name });
    return stored;
  }

  async jsonPatch(): Promise<T> {
    throw new Error(`FakeObjects(${this.kind}).jsonPatch is not faked`);
  }

  async delete(name: string, options: { uid?: string } = {}): Promise<boolean> {
    const current = this.objects.get(name);
    if (!current) return false;
    if (options.uid !== undefined && current.metadata.uid !== options.uid) {
      throw new FakeApiError(409, `${this.kind} ${name}: uid precondition failed`);
    }
    this.writes.push({ verb: 'delete', name });
    if (current.metadata.finalizers?.length) {
      current.metadata.deletionTimestamp ??= new Date(0).toISOString();
      current.metadata.resourceVersion = String(++this.version);
    } else {
      this.objects.delete(name);
    }
    return true;
  }

  private patch(name: string, patch: object): T {
    const current = this.objects.get(name);
    if (!current) throw new FakeApiError(404, `${this.kind} ${name} not found`);
    const expected = (patch as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
    if (expected !== undefined && expected !== current.metadata.resourceVersion) {
      throw new FakeApiError(409, `${this.kind} ${name}: the object has been modified`);
    }
    const next = mergePatch(current, patch) as T;
    next.metadata.resourceVersion = String(++this.version);
    if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length) this.objects.delete(name);
    else this.objects.set(name, next);
    return clone(next);
  }
}

/** Orchestration instances by ID, with the OrchestrationClient's contract (startNew refuses a live ID). */
export class FakeOrchestrations implements OrchestrationClient {
  readonly instances = new Map<string, OrchestrationStatus>();
  readonly started: { name: string; instanceId: string; input: unknown }[] = [];
  /** startNew calls, including those refused because the instance was live. */
  startCalls = 0;
  readonly purged: string[] = [];
  readonly terminated: string[] = [];
  /** Events raised to an existing instance, in order. */
  readonly raised: { instanceId: string; eventName: string }[] = [];
  /** Runs inside startNew before it stores the instance: lets a test play a concurrent starter. */
  beforeStart: ((instanceId: string) => void) | undefined;

  /** An instance that exists already (left by an earlier sweep, process or delivery). */
  seed(instanceId: string, name: string, runtimeStatus: OrchestrationRuntimeStatus, input?: unknown): void {
    this.instances.set(instanceId, { instanceId, name, runtimeStatus, input, createdTime: new Date(0) });
  }

  async startNew(name: string, options: { instanceId: string; input?: unknown }): Promise<string> {
    this.startCalls += 1;
    this.beforeStart?.(options.instanceId);
    const existing = this.instances.get(options.instanceId);
    if (existing && ['Pending', 'Running', 'ContinuedAsNew', 'Suspended'].includes(existing.runtimeStatus)) {
      throw new Error(`an instance with ID '${options.instanceId}' already exists`);
    }
    this.started.push({ name, instanceId: options.instanceId, input: options.input });
    this.seed(options.instanceId, name, 'Pending', options.input);
    return options.instanceId;
  }

  async getStatus(instanceId: string): Promise<OrchestrationStatus | undefined> {
    return this.instances.get(instanceId);
  }

  async raiseEvent(instanceId: string, eventName: string): Promise<void> {
    if (!this.instances.has(instanceId)) throw new Error(`no instance ${instanceId}`);
    this.raised.push({ instanceId, eventName });
  }

  async terminate(instanceId: string): Promise<void> {
    const instance = this.instances.get(instanceId);
    if (!instance) throw new Error(`no instance ${instanceId}`);
    this.terminated.push(instanceId);
    this.instances.set(instanceId, { ...instance, runtimeStatus: 'Terminated' });
  }

  async purge(instanceId: string): Promise<void> {
    this.purged.push(instanceId);
    this.instances.delete(instanceId);
  }
}

export interface RecordedEvent {
  type: 'Normal' | 'Warning';
  target: EventTarget;
  reason: string;
  message: string;
}

export const FAKE_NOW = new Date('2026-11-30T12:00:00Z');

function fakeSettings(): Settings {
  const subscriptionId = '00000000-0000-0000-0000-000000000001';
  const resourceGroup = 'MC_test_test_westus2';
  return loadSettings({
    ...localClusterSettings(subscriptionId, resourceGroup),
    KUBECONFIG: '/dev/null',
    CLUSTER_NAME: 'test',
    AZURE_SUBSCRIPTION_ID: subscriptionId,
    AZURE_NODE_RESOURCE_GROUP: resourceGroup,
    AZURE_LOCATION: 'westus2',
    AZURE_SUBNET_ID: `/subscriptions/${subscriptionId}/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes`,
    NODE_SSH_PUBLIC_KEY: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHRlc3Q= test',
    BOOTSTRAP_API_SERVER_URL: 'https://test.hcp.westus2.azmk8s.io:443',
    BOOTSTRAP_CA_CERT: readFileSync(new URL('../fixtures/aks-node-config/ca.pem', import.meta.url), 'utf8'),
    AzureWebJobsStorage: 'UseDevelopmentStorage=true',
  });
}

export interface FakeLifecycle {
  deps: LifecycleDependencies;
  nodeClaims: FakeObjects<NodeClaim>;
  nodePools: FakeObjects<NodePool>;
  nodeClasses: FakeObjects<AKSNodeClass>;
  events: RecordedEvent[];
  /** The machines behind NodeClaims, as `deps.cloud` answers. */
  cloud: FakeCloudProvider;
  /** The Resource SKUs catalog the fake cloud provider's offerings come from. */
  skus: SkuRecord[];
  /** The offerings the fake cloud provider holds unavailable (`deps.cloud.rememberPreemption` and remembered launch failures add). */
  unavailableOfferings: UnavailableOffering[];
  /** What `deps.cluster.launchesInFlight` answers (a function, so a test can make it fail). */
  launchesInFlight: () => Promise<number>;
  /** The pods and PDBs `deps.cluster.workloads` answers: none unless a test adds some. */
  workloads: { pods: ConsolidationPod[]; pdbs: PdbLimit[] };
  /** The Nodes `deps.nodes` reads and writes. */
  nodes: FakeNodes;
  /** The pods `deps.drainPods` lists, evicts and deletes. */
  pods: FakePods;
  /** What `deps.decisionRecords` was given. */
  decisionRecords: MemoryDecisionRecords;
  /**
   * The NodeClaims (UID, and /attempt when it has one) whose bootstrap token `deps.bootstrapTokens.delete`
   * was asked to delete.
   */
  deletedBootstrapTokens: string[];
  /** The DaemonSets `deps.provisioningReads.daemonSets` lists. */
  daemonSets: V1DaemonSet[];
  /** The sweep's Lease, as `deps.leases` takes it. */
  leases: FakeLeases;
  /** The CapacityBuffers, PodTemplates and workloads `deps.capacityBuffers` reads and writes. */
  capacityBuffers: FakeCapacityBuffers;
}

/**
 * Drift fans out as far as the budget allows, without a rollout's canary and waves: what a rollout bounds
 * is rollout-room.test.ts's.
 */
export function immediateRollouts(fake: FakeLifecycle): void {
  fake.deps.settings = {
    ...fake.deps.settings,
    rollout: { ...fake.deps.settings.rollout, policy: 'Immediate' },
  };
}

export function fakeLifecycle(options: { now?: Date } = {}): FakeLifecycle {
  const now = options.now ?? FAKE_NOW;
  const nodeClaims = new FakeObjects<NodeClaim>('NodeClaim');
  const nodePools = new FakeObjects<NodePool>('NodePool');
  const nodeClasses = new FakeObjects<AKSNodeClass>('AKSNodeClass');
  const events: RecordedEvent[] = [];
  const recorder: EventRecorder = {
    async warning(target, reason, message) {
      events.push({ type: 'Warning', target, reason, message });
    },
    async normal(target, reason, message) {
      events.push({ type: 'Normal', target, reason, message });
    },
  };
  const settings = fakeSettings();
  const catalog: SkuRecord[] = [];
  // The fakes stand in for adapter classes (their private fields make a structural fake impossible),
  // which is why these few casts are here and nowhere in the code under test.
  const skus = { list: async () => catalog } as unknown as ResourceSkuCatalog;
  const objects: KarpenterObjects = {
    nodeClaims: nodeClaims as unknown as CustomObjects<NodeClaim>,
    nodePools: nodePools as unknown as CustomObjects<NodePool>,
    nodeClasses: nodeClasses as unknown as CustomObjects<AKSNodeClass>,
  };
  const kube = () => Promise.reject(new Error('kube() is not faked in this test'));
  const cloud = new FakeCloudProvider({ settings, skus, kube, objects, now: () => now });
  const fake: FakeLifecycle = {
    nodeClaims,
    nodePools,
    nodeClasses,
    events,
    cloud,
    skus: catalog,
    unavailableOfferings: cloud.unavailable,
    launchesInFlight: async () => 0,
    workloads: { pods: [], pdbs: [] },
    nodes: new FakeNodes(),
    pods: new FakePods(() => now),
    decisionRecords: new MemoryDecisionRecords(),
    deletedBootstrapTokens: [],
    daemonSets: [],
    leases: new FakeLeases(),
    capacityBuffers: new FakeCapacityBuffers(),
    deps: undefined as unknown as LifecycleDependencies,
  };
  const cluster: ClusterReader = {
    launchesInFlight: () => fake.launchesInFlight(),
    read: () => Promise.reject(new Error('cluster.read is not faked: give the step a SweepView')),
    workloads: async () => ({ ...fake.workloads, podEventTimes: new Map() }),
    // The stores themselves: every write is in them.
    readSelectedFresh: async (labelSelector) => ({
      nodeClaims: await nodeClaims.list({ labelSelector }),
      nodes: await fake.nodes.listLabelled(labelSelector),
      sources: { nodeClaims: 'uncached', nodes: 'uncached' },
    }),
    readFresh: async () => ({
      nodeClaims: await nodeClaims.list(),
      nodes: await fake.nodes.list(),
      nodePools: await nodePools.list(),
      nodeClasses: await nodeClasses.list(),
      sources: { nodeClaims: 'uncached', nodes: 'uncached' },
    }),
    // No pod cache: a provisioning window lists its pods (provisioningReads below).
    podsFresh: async () => undefined,
    stop: () => undefined,
  };
  fake.deps = {
    settings,
    log: silentLogger,
    metrics: createMetrics(silentLogger),
    now: () => now,
    kube,
    objects,
    events: recorder,
    cloud: fake.cloud,
    cluster,
    nodes: fake.nodes,
    drainPods: fake.pods,
    leases: fake.leases,
    capacityBuffers: fake.capacityBuffers,
    decisionRecords: fake.decisionRecords,
    // A provisioning window's fresh reads, of the same stores the phases write.
    provisioningReads: {
      cluster: async () => ({
        nodeClaims: await nodeClaims.list(),
        nodes: await fake.nodes.list(),
        nodePools: await nodePools.list(),
        nodeClasses: await nodeClasses.list(),
      }),
      pods: async () => ({
        bound: await fake.pods.bound(),
        unbound: await fake.pods.unbound(),
        fromCache: false,
      }),
      daemonSets: async () => structuredClone(fake.daemonSets),
      // No volumes: a pod that mounts a claim is placed as if its claim were not bound yet.
      persistentVolumeClaims: async () => [],
      persistentVolumes: async () => [],
    },
    bootstrapTokens: {
      delete: async (nodeClaim) => {
        fake.deletedBootstrapTokens.push(
          nodeClaim.attempt === undefined ? nodeClaim.uid : `${nodeClaim.uid}/${nodeClaim.attempt}`,
        );
        return true;
      },
    },
  };
  return fake;
}

/** A sweep context over a fixed view of the cluster, as one sweep step sees it. */
export function fakeSweepContext(
  fake: FakeLifecycle,
  orchestrations: FakeOrchestrations,
  state: Partial<ClusterState> = {},
): SweepContext {
  return {
    deps: fake.deps,
    view: new SweepView({
      readAt: fake.deps.now(),
      nodeClaims: state.nodeClaims ?? [],
      nodes: state.nodes ?? [],
      nodePools: state.nodePools ?? [],
      nodeClasses: state.nodeClasses ?? [],
    }),
    orchestrations,
    log: silentLogger,
    memory: { leftovers: createLeftoverMemory() },
    stopping: () => false,
  };
}
