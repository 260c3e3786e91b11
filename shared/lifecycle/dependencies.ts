// Everything the lifecycle handlers do I/O through, built once per process from settings. The local stack
// and tests build it with an emulator endpoint and a fixed-token credential; Azure uses managed identity.
// Unit tests of lifecycle phases use the in-memory fake in test/support/fake-lifecycle.ts instead.
import { TableClient } from '@azure/data-tables';
import { DefaultAzureCredential, type TokenCredential } from '@azure/identity';
import { loadSettings, type Settings } from '../config/settings.js';
import { createComputeClient } from '../azure/compute-client.js';
import { NodeImageVersions } from '../azure/node-image-versions.js';
import { RetailPriceCatalog } from '../azure/retail-prices.js';
import { ResourceSkuCatalog } from '../azure/resource-skus.js';
import { CapacityReservationGroups } from '../azure/capacity-reservations.js';
import { storageTlsOptions } from '../azure/storage-tls.js';
import { tableClientFromConnectionString } from '../azure/table-client.js';
import { UnavailableOfferingsStore } from '../azure/unavailable-offerings.js';
import { DecisionRecordTable } from '../azure/decision-record-table.js';
import type { DecisionRecords } from '../decisions/explain/decision-record.js';
import { ComputeUsages } from '../azure/compute-usages.js';
import { PlacementScoresReader } from '../azure/placement-scores.js';
import { VirtualMachines } from '../azure/virtual-machines.js';
import { azureCloudProvider } from '../cloudprovider/azure.js';
import type { CloudProvider } from '../cloudprovider/types.js';
import type { CloudProviderParts } from '../cloudprovider/parts.js';
import { deleteBootstrapToken } from '../kube/bootstrap-tokens.js';
import { kubeCapacityBufferStore, type CapacityBufferStore } from '../kube/capacity-buffers.js';
import { kubeClientProvider, type KubeClients } from '../kube/client.js';
import { kubeDrainPods, type DrainPods } from '../kube/drain-pods.js';
import { kubeNodeStore, type NodeStore } from '../kube/node-store.js';
import { karpenterObjects, type KarpenterObjects } from '../kube/custom-objects.js';
import type { EventReason } from '../decisions/event-reasons.js';
import { kubeEventRecorder, type EventRecorder } from '../kube/events.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { createMetrics, type Metrics } from '../observability/metrics.js';
import { listingClusterReader, watchingClusterReader, type ClusterReader } from '../kube/cluster-reader.js';
import { kubeProvisioningReads, type ProvisioningReads } from '../kube/provisioning-reads.js';
import { kubeLeases, type Leases } from '../kube/lease.js';

/**
 * What the lifecycle shares with the cloud provider (settings, clock, log, Kubernetes clients) and its
 * own ports. The Azure adapters the provider is built from stay behind it: the lifecycle reaches the
 * cloud only through `cloud`.
 */
export interface LifecycleDependencies extends Pick<
  CloudProviderParts,
  'settings' | 'log' | 'now' | 'kube' | 'objects'
> {
  metrics: Metrics;
  /** Events under the reasons of shared/decisions/event-reasons.ts only (upstream's names where upstream has one). */
  events: EventRecorder<EventReason>;
  /** The machines behind NodeClaims: every VM create, read, delete and reboot goes through it. */
  cloud: CloudProvider;
  /** Where the sweep reads the cluster's state from (../kube/cluster-reader.ts). */
  cluster: ClusterReader;
  /** Node reads and writes: registration, initialization, the disrupted taint, termination. */
  nodes: NodeStore;
  /** A Node's pods listed fresh: those termination's drain evicts and deletes, and a candidate's at its mark. */
  drainPods: DrainPods;
  /**
   * A registered node's bootstrap token (that of the NodeClaim's launch attempt), deleted once it has its
   * own credentials; false when the Secret under its name is not the app's and was left alone.
   */
  bootstrapTokens: { delete(nodeClaim: { uid: string; attempt?: string }): Promise<boolean> };
  /** What a provisioning window reads, fresh from the API server (../kube/provisioning-reads.ts). */
  provisioningReads: ProvisioningReads;
  /** The sweep's singleton Lease (../kube/lease.ts). */
  leases: Leases;
  /** CapacityBuffers and the PodTemplates and workloads they refer to (gate CapacityBuffer). */
  capacityBuffers: CapacityBufferStore;
  /** What provisioning windows and disruption passes decided, and why: written once each, read by explain. */
  decisionRecords: DecisionRecords;
}

/**
 * The dependencies as built for Azure or the emulators: the lifecycle's, and the Azure adapters the cloud
 * provider was built from (but its VM adapter), for the tests and local tools that read one directly. The
 * lifecycle's code takes LifecycleDependencies and never sees them.
 */
export interface AzureDependencies extends LifecycleDependencies {
  azure: Omit<CloudProviderParts, 'vms'>;
  /** The records' table itself, whose size and write costs the day scenario and the bench report. */
  decisionRecords: DecisionRecordTable;
}

/** The Kubernetes ports of LifecycleDependencies, implemented with the API server client. */
export function kubePorts(
  kube: () => Promise<KubeClients>,
  objects: KarpenterObjects,
  /** The cluster reader whose caches a provisioning window reads, caught up; without it, it lists. */
  cluster?: ClusterReader,
): Pick<
  LifecycleDependencies,
  'nodes' | 'drainPods' | 'bootstrapTokens' | 'provisioningReads' | 'leases' | 'capacityBuffers'
> {
  return {
    capacityBuffers: kubeCapacityBufferStore(kube),
    leases: kubeLeases(kube),
    provisioningReads: kubeProvisioningReads({ kube, objects }, cluster),
    nodes: kubeNodeStore(kube),
    drainPods: kubeDrainPods(kube),
    bootstrapTokens: {
      delete: async (nodeClaim) => deleteBootstrapToken((await kube()).core, nodeClaim),
    },
  };
}

export const EVENT_COMPONENT = 'nodeclaim-azure';
/**
 * The vCPU quotas are read again after a minute (and at once after a quota refusal); launches in between
 * count what they hold in flight.
 */
const USAGES_CACHE_MS = 60_000;
/** Azure keeps a placement score for about a minute; the Azure provider's recommender caches 45 s. */
const PLACEMENT_SCORES_CACHE_MS = 45_000;

export function createDependencies(
  settings: Settings,
  options: {
    credential?: TokenCredential;
    log?: Logger;
    metrics?: Metrics;
    now?: () => Date;
    /**
     * `watch` (the default) keeps a watch-fed cache between sweeps; `list` reads everything on every
     * sweep, for callers that need each sweep to see every write made before it (tests).
     */
    clusterReads?: 'watch' | 'list';
  } = {},
): AzureDependencies {
  const credential = options.credential ?? new DefaultAzureCredential();
  const log = options.log ?? createLogger({ component: EVENT_COMPONENT });
  const requestTimeoutMs = settings.requestTimeoutSeconds * 1000;
  const compute = createComputeClient({
    credential,
    subscriptionId: settings.azure.subscriptionId,
    endpoint: settings.azure.armEndpoint,
    ...(settings.azure.armCaCertPem ? { caCertPem: settings.azure.armCaCertPem } : {}),
    requestTimeoutMs,
  });
  // Placement scores are a hint: asked once, never retried, so a launch waits at most one request.
  const hintClient = createComputeClient({
    credential,
    subscriptionId: settings.azure.subscriptionId,
    endpoint: settings.azure.armEndpoint,
    ...(settings.azure.armCaCertPem ? { caCertPem: settings.azure.armCaCertPem } : {}),
    requestTimeoutMs,
    maxRetries: 0,
  });
  const kube = kubeClientProvider(settings.kubernetes, credential, requestTimeoutMs);
  const now = options.now ?? (() => new Date());
  const objects = karpenterObjects(kube);
  const cluster =
    options.clusterReads === 'list'
      ? listingClusterReader({ kube, objects })
      : watchingClusterReader(
          { kube, objects },
          {
            onError: (error) => log.warn('cluster watch failed; it resumes from the last version', { error }),
          },
        );
  const parts: CloudProviderParts = {
    settings,
    log,
    now,
    kube,
    objects,
    vms: new VirtualMachines(compute, settings.azure.resourceGroup),
    skus: new ResourceSkuCatalog(
      compute,
      settings.azure.location,
      settings.launch.skuCacheSeconds * 1000,
      () => now().getTime(),
    ),
    images: new NodeImageVersions(
      compute,
      settings.azure.location,
      settings.launch.nodeImageCacheSeconds * 1000,
      () => now().getTime(),
    ),
    unavailable: new UnavailableOfferingsStore(
      tableClient(settings, settings.unavailableOfferingsTable, credential),
    ),
    pricing: new RetailPriceCatalog({
      region: settings.azure.location,
      endpoint: settings.azure.retailPricesEndpoint,
      ...(settings.azure.armCaCertPem ? { caCertPem: settings.azure.armCaCertPem } : {}),
      now: () => now().getTime(),
      onRefreshError: (error) =>
        log.warn('retail prices refresh failed; launch and provisioning keep the prices they had', {
          error,
        }),
    }),
    reservations: new CapacityReservationGroups(
      compute,
      settings.featureGates.ReservedCapacity ? settings.capacityReservationGroups : [],
      (group, error) =>
        log.warn('capacity reservation group could not be read; it offers nothing until it can', {
          group: group.id,
          error,
        }),
      () => now().getTime(),
    ),
    usages: new ComputeUsages(
      compute,
      settings.azure.location,
      USAGES_CACHE_MS,
      () => now().getTime(),
      (error) =>
        log.warn('vCPU quota usages could not be read; quota is learned from the PUT until they can', {
          error,
        }),
    ),
    placementScores: new PlacementScoresReader(hintClient, {
      endpoint: settings.azure.armEndpoint,
      subscriptionId: settings.azure.subscriptionId,
      location: settings.azure.location,
      ttlMs: PLACEMENT_SCORES_CACHE_MS,
      now: () => now().getTime(),
      onError: (error, priority, vmSizes) =>
        log.warn('placement scores could not be read; these sizes launch unscored', {
          priority,
          vmSizes,
          error,
        }),
    }),
  };
  const { vms: _vms, ...azure } = parts;
  return {
    settings,
    log,
    now,
    kube,
    objects,
    azure,
    metrics: options.metrics ?? createMetrics(log),
    events: kubeEventRecorder(kube, EVENT_COMPONENT, log),
    cloud: azureCloudProvider(parts),
    cluster,
    decisionRecords: decisionRecordTable(settings, credential, now),
    ...kubePorts(kube, objects, cluster),
  };
}

/** The decision records' table, for the app and for whoever reads them beside it (a scenario's report). */
export function decisionRecordTable(
  settings: Settings,
  credential: TokenCredential,
  now: () => Date,
): DecisionRecordTable {
  return new DecisionRecordTable(
    tableClient(settings, settings.decisionRecords.table, credential),
    settings.decisionRecords.retentionHours * 3_600_000,
    now,
  );
}

function tableClient(settings: Settings, table: string, credential: TokenCredential): TableClient {
  if (settings.storage.connectionString) {
    return tableClientFromConnectionString(settings.storage.connectionString, table);
  }
  return new TableClient(
    settings.storage.tableServiceUri ?? `https://${settings.storage.accountName}.table.core.windows.net`,
    table,
    credential,
    storageTlsOptions(settings.storage.caCertPem),
  );
}

/**
 * Where a function's handler gets its dependencies, asked on each invocation: the Function App's entry
 * passes getDependencies (built on first use, so loading the app does no I/O); the local host passes the
 * set it built for the emulators.
 */
export type DependencySource = () => LifecycleDependencies;

let current: LifecycleDependencies | undefined;

/** This process's dependencies in Azure, created from its settings on first use. */
export function getDependencies(): LifecycleDependencies {
  current ??= createDependencies(loadSettings());
  return current;
}
