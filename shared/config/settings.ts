import { parseFiniteDuration } from '../decisions/duration.js';
import {
  parseCapacityReservationGroupIds,
  type CapacityReservationGroupRef,
} from '../cloudprovider/azure/decisions/capacity-reservation-groups.js';

// The one typed, validated view of the app's configuration. An invalid or missing setting stops startup
// with a message that names the setting and says what it should look like.
import {
  networkMode,
  type NetworkModeName,
  type NetworkProfile,
} from '../cloudprovider/azure/decisions/network-mode.js';
import { VM_MEMORY_OVERHEAD_FRACTION } from '../decisions/node-reservations.js';
import { entraJwksUri } from '../azure/entra-token.js';
import {
  AZURE_REPAIR_POLICIES,
  parseRepairPolicies,
  type RepairPolicy,
} from '../decisions/node-repair/policies.js';
import {
  parseRolloutCount,
  ROLLOUT_POLICIES,
  type RolloutCount,
  type RolloutPolicy,
} from '../decisions/rollout.js';

/** Where infra/k8s and the chart install the app's namespaced objects by default. */
export const DEFAULT_SYSTEM_NAMESPACE = 'nodeclaim-system';

export interface Settings {
  clusterName: string;
  /**
   * The namespace the app was installed in (SYSTEM_NAMESPACE, as Karpenter names its own; default
   * nodeclaim-system, the namespace infra/k8s and the chart install into): the sweep's Lease lives there,
   * not in kube-system.
   */
  systemNamespace: string;
  azure: {
    subscriptionId: string;
    /** The resource group that holds the nodes' VMs (the AKS node resource group). */
    resourceGroup: string;
    location: string;
    /** ARM endpoint; the ARM emulator's URL locally. */
    armEndpoint: string;
    /**
     * Extra CA to trust for the ARM endpoint and the Retail Prices endpoint (the local emulator's, which
     * serves both); unset in Azure.
     */
    armCaCertPem?: string;
    /**
     * Azure Retail Prices API (RETAIL_PRICES_ENDPOINT, default https://prices.azure.com; the ARM
     * emulator's URL locally).
     */
    retailPricesEndpoint: string;
    /** Subnet for node NICs when the AKSNodeClass does not name one. */
    defaultSubnetId: string;
    /** LINUX_ADMIN_USERNAME (the Azure provider's name; alias NODE_ADMIN_USERNAME): the VMs' admin user. */
    adminUsername: string;
    sshPublicKey: string;
  };
  kubernetes:
    | { mode: 'kubeconfig'; kubeconfigPath: string }
    | { mode: 'entra'; apiServerUrl: string; caCertPem: string; tokenScope: string };
  /** What the AKS cluster tells every node (read once from the cluster by the deployment). */
  cluster: ClusterSettings;
  bootstrap: {
    apiServerUrl: string;
    caCertPem: string;
  };
  storage: {
    /**
     * A connection string (Azurite locally), or undefined when the account is reached with an identity.
     * Plain HTTP is accepted only for Azurite (loopback or devstoreaccount1; azure/table-client.ts).
     */
    connectionString?: string;
    /** The account name for identity-based connections (`AzureWebJobsStorage__accountName`). */
    accountName?: string;
    /**
     * The queue and table service URLs of an identity-based connection
     * (`AzureWebJobsStorage__queueServiceUri`, `AzureWebJobsStorage__tableServiceUri`, the Functions host's
     * names); by default `https://<accountName>.queue|table.core.windows.net`. The local storage front's
     * URLs locally.
     */
    queueServiceUri?: string;
    tableServiceUri?: string;
    /** Extra CA to trust for those URLs (STORAGE_CA_CERT; the local storage front's); unset in Azure. */
    caCertPem?: string;
  };
  queues: {
    events: string;
  };
  /** Storage table that records offerings that recently failed, shared by every instance. */
  unavailableOfferingsTable: string;
  /** Where provisioning windows and disruption passes record what they decided, for `explain`. */
  decisionRecords: {
    /** DECISION_RECORDS_TABLE */
    table: string;
    /** DECISION_RECORD_RETENTION_HOURS: how long a record is kept. */
    retentionHours: number;
  };
  launch: {
    pollIntervalSeconds: number;
    maxPollIntervalSeconds: number;
    deadlineMinutes: number;
    skuCacheSeconds: number;
    /** NODE_IMAGE_CACHE_SECONDS: how long a gallery definition's published versions are kept (AKS publishes weekly). */
    nodeImageCacheSeconds: number;
  };
  lifecycle: {
    sweepSchedule: string;
    registrationTimeoutMinutes: number;
  };
  /** Drift replacement, drain, consolidation and garbage collection. */
  disruption: DisruptionSettings;
  /**
   * How long one ARM or Kubernetes API request may take before it is abandoned and the work retried
   * (REQUEST_TIMEOUT_SECONDS, default 30).
   */
  requestTimeoutSeconds: number;
  /**
   * Whether the sweep exports the per-node gauges, karpenter_nodes_allocatable and
   * operator_nodeclaim_status_condition_count (METRICS_PER_NODE, default false): a series per node or
   * NodeClaim every export, which at 1,000 nodes is most of the telemetry bill (docs/metrics.md).
   */
  metricsPerNode: boolean;
  /** Provisioning windows. */
  provisioning: ProvisioningSettings;
  /** Upstream's scheduling policies, the same for every solve. */
  scheduling: SchedulingPolicySettings;
  /** Node repair (gate NodeRepair) and its policies. */
  repair: RepairSettings;
  /** How drift rolls out: a canary, waves at the budget and health gates (docs/rollouts.md). */
  rollout: RolloutSettings;
  /** FEATURE_GATES as upstream spells them; every gate this app implements, at upstream's default. */
  featureGates: Readonly<Record<FeatureGate, boolean>>;
  /**
   * The Capacity Reservation Groups launches may use (CAPACITY_RESERVATION_GROUP_IDS, comma-separated ARM
   * IDs; none by default). Their reservations become `reserved` offerings while ReservedCapacity is on.
   */
  capacityReservationGroups: readonly CapacityReservationGroupRef[];
  /**
   * The explain HTTP functions' Microsoft Entra ID authentication (docs/explain.md): present when
   * EXPLAIN_AUDIENCE is set; without it every explain request is answered 503, never unauthenticated.
   */
  explain?: ExplainAuthSettings;
}

export interface ExplainAuthSettings {
  /** The tenant whose tokens are accepted: AKS_TENANT_ID, the cluster's (the deployment's) tenant. */
  tenantId: string;
  /** EXPLAIN_AUDIENCE: the app registration's client ID and/or Application ID URI (comma-separated). */
  audiences: readonly string[];
  /**
   * Where the tenant's signing keys are read: its Entra JWKS, unless EXPLAIN_JWKS_URI names another (the
   * local Entra emulator's; http:// only on loopback).
   */
  jwksUri: string;
}

export interface RepairSettings {
  /** FEATURE_GATES=NodeRepair=true; off by default, as upstream's alpha gate. */
  enabled: boolean;
  /** REPAIR_POLICIES; the Azure provider's by default (decisions/node-repair/policies.ts). */
  policies: RepairPolicy[];
  /** REPAIR_MAX_REBOOTS: reboots tried before a node whose policy allows one is replaced (default 1). */
  maxReboots: number;
  /** REPAIR_REBOOT_RECOVERY_SECONDS: how long a rebooted node has to clear its condition (default 300). */
  rebootRecoverySeconds: number;
  /**
   * PREEMPTION_DRAIN_SECONDS: a node with a spot eviction notice is drained at the latest this long after
   * the notice (default 15, half of Azure's ~30 s), whether or not its replacement is ready by then.
   */
  preemptionDrainSeconds: number;
}

export const DEFAULT_REPAIR_SETTINGS: RepairSettings = {
  enabled: false,
  policies: [...AZURE_REPAIR_POLICIES],
  maxReboots: 1,
  rebootRecoverySeconds: 300,
  preemptionDrainSeconds: 15,
};

export interface RolloutSettings {
  /** ROLLOUT_POLICY: Canary (default) or Immediate; a NodePool's karpenter.azure.com/rollout-policy wins. */
  policy: RolloutPolicy;
  /** ROLLOUT_CANARY: the canary's size, a count or a percentage of the drifted nodes (default 1). */
  canary: RolloutCount;
  /** ROLLOUT_POLL_SECONDS: how often the rollout workflow looks at its NodePool (default 10). */
  pollSeconds: number;
  /** ROLLOUT_SOAK_SECONDS: how long each finished wave is watched before the next (default 300). */
  soakSeconds: number;
  /** ROLLOUT_INITIALIZED_WITHIN_SECONDS: a replacement not Initialized by then fails a gate (default 600). */
  initializedWithinSeconds: number;
  /** ROLLOUT_POD_READY_WITHIN_SECONDS: a pod on a replacement not Ready by then fails a gate (default 300). */
  podReadyWithinSeconds: number;
  /** ROLLOUT_MAX_POD_RESTARTS: restarts of one pod on a replacement that can fail a gate (default 3). */
  maxPodRestarts: number;
}

export const DEFAULT_ROLLOUT_SETTINGS: RolloutSettings = {
  policy: 'Canary',
  canary: { count: 1 },
  pollSeconds: 10,
  soakSeconds: 300,
  initializedWithinSeconds: 600,
  podReadyWithinSeconds: 300,
  maxPodRestarts: 3,
};

export interface ClusterSettings {
  /** The control plane's Kubernetes version, "1.33.2": kubelet of this version, image family rules. */
  kubernetesVersion: string;
  /** Entra tenant of the cluster, written into the node's azure.json; optional. */
  tenantId?: string;
  network: NetworkProfile;
  networkMode: NetworkModeName;
  /** kube-dns's ClusterIP (the cluster's networkProfile.dnsServiceIP). */
  dnsServiceIp: string;
  /** resourceGuid of the node VNet; overlay nodes carry it as a label. Optional. */
  vnetGuid?: string;
  /** The node NSG (aks-agentpool-<id>-nsg in the node resource group), by resource ID. */
  nodeSecurityGroupId: string;
  /** Whether the NIC itself gets the NSG: only when the VNet is the cluster's own (BYO VNet). */
  attachNsgToNic: boolean;
  /** The cluster's kubelet identity: attached to every VM (ACR pulls, cloud provider). */
  kubeletIdentity: { resourceId: string; clientId: string };
  /** Backend pools of the cluster load balancer the NIC joins (outbound and inbound); may be empty. */
  loadBalancerBackendPoolIds: string[];
  /**
   * VM_MEMORY_OVERHEAD_PERCENT, the Azure provider's setting: the share of a size's memory the guest does
   * not see, subtracted from every instance type's memory capacity before scheduling. A fraction, as
   * upstream writes it (default 0.075, i.e. 7.5%).
   */
  vmMemoryOverheadFraction: number;
}

/** Karpenter's batcher: a window closes after `idleMs` without a new pending pod, or `maxMs` after it opened. */
export interface ProvisioningSettings {
  /** BATCH_IDLE_DURATION, a Go duration ("1s"). */
  batchIdleMs: number;
  /** BATCH_MAX_DURATION, a Go duration ("10s"). */
  batchMaxMs: number;
  /**
   * PROVISIONING_SELECTOR: a label selector the pods and the NodePools' template labels must match, for
   * several systems sharing one cluster (the end-to-end tests); unset provisions for every pod.
   */
  selector?: string;
}

export const DEFAULT_PROVISIONING_SETTINGS: ProvisioningSettings = { batchIdleMs: 1_000, batchMaxMs: 10_000 };

export interface DisruptionSettings {
  /** How often a replacement orchestration looks at its new NodeClaim. */
  replacementPollSeconds: number;
  /**
   * How long the disruption executor waits for a wake from its replacements before it looks at them
   * itself (a wake is lost only to a host killed between a write and its raise); doubled after each look
   * that found them still on their way, up to four times this.
   */
  replacementFallbackSeconds: number;
  /** A replacement not Initialized by then is abandoned and the old node put back in service. */
  replacementTimeoutMinutes: number;
  /** A node whose replacement failed is not tried again before this. */
  replacementBackoffMinutes: number;
  /** How often termination retries evictions that a PodDisruptionBudget refused. */
  drainPollSeconds: number;
  /** A tagged VM without a NodeClaim is deleted only once it is at least this old. */
  orphanVmGraceMinutes: number;
  /** A consolidation decision is checked again this long after it was made, before it acts. */
  consolidationValidationSeconds: number;
  /** Replace spot nodes with cheaper spot nodes (upstream's feature gate SpotToSpotConsolidation). */
  spotToSpotConsolidation: boolean;
}

export const DEFAULT_DISRUPTION_SETTINGS: DisruptionSettings = {
  replacementPollSeconds: 5,
  replacementFallbackSeconds: 180,
  replacementTimeoutMinutes: 30,
  replacementBackoffMinutes: 5,
  drainPollSeconds: 5,
  orphanVmGraceMinutes: 10,
  consolidationValidationSeconds: 15,
  spotToSpotConsolidation: false,
};

type Env = Readonly<Record<string, string | undefined>>;

/** NCRONTAB (with seconds) of orphan VM collection when GC_SCHEDULE is not set: List VMs is 300/min. */
export const DEFAULT_GC_SCHEDULE = '0 */5 * * * *';

/** NCRONTAB (with seconds) of the lifecycle sweep when SWEEP_SCHEDULE is not set. */
export const DEFAULT_SWEEP_SCHEDULE = '*/15 * * * * *';

/**
 * The timers' schedules, read by functions/triggers.ts when it loads, because the Functions host reads a
 * timer's schedule at indexing time, before loadSettings runs.
 */
export function timerSchedules(env: Env = process.env): { sweep: string; gc: string } {
  return {
    sweep: env['SWEEP_SCHEDULE']?.trim() || DEFAULT_SWEEP_SCHEDULE,
    gc: env['GC_SCHEDULE']?.trim() || DEFAULT_GC_SCHEDULE,
  };
}

/**
 * Upstream's and the Azure provider's setting names, each with the names this app used before, which are
 * still read (documented aliases). The upstream name wins; both set to different values is an error.
 * CLUSTER_ENDPOINT is the Azure provider's API server endpoint for new nodes; the app runs outside the
 * cluster and reaches the same endpoint, so it is also the app's API server unless KUBE_API_SERVER_URL
 * (or, for nodes, BOOTSTRAP_API_SERVER_URL) names another.
 */
export const SETTING_ALIASES = {
  VNET_SUBNET_ID: ['AZURE_SUBNET_ID'],
  LOCATION: ['AZURE_LOCATION'],
  SSH_PUBLIC_KEY: ['NODE_SSH_PUBLIC_KEY'],
  CLUSTER_ENDPOINT: ['KUBE_API_SERVER_URL'],
  LINUX_ADMIN_USERNAME: ['NODE_ADMIN_USERNAME'],
} as const satisfies Record<string, readonly string[]>;

/**
 * Former aliases that are no longer read, because another tool owns the name: azd keeps the resource
 * group of the app's own resources in AZURE_RESOURCE_GROUP, so reading it as the node resource group
 * could create VMs in the wrong group. Seen without the setting it stood for, it stops startup with a
 * message naming the setting to use; beside that setting it is ignored (it is then azd's).
 */
export const RETIRED_SETTING_ALIASES = {
  AZURE_NODE_RESOURCE_GROUP: {
    alias: 'AZURE_RESOURCE_GROUP',
    why: "azd uses that name for the app's own resource group",
  },
} as const satisfies Record<string, { alias: string; why: string }>;

/**
 * Upstream Karpenter's scheduling policies (--preference-policy, --min-values-policy), by their upstream
 * names and values, so a configuration written for Karpenter means the same here. Every solve the app runs
 * (provisioning, consolidation, capacity buffers, what-if) takes them, or the same pods could be placed
 * one way by provisioning and another by consolidation.
 */
export const PREFERENCE_POLICIES = ['Respect', 'Ignore'] as const;
export type PreferencePolicy = (typeof PREFERENCE_POLICIES)[number];
export const MIN_VALUES_POLICIES = ['Strict', 'BestEffort'] as const;
export type MinValuesPolicy = (typeof MIN_VALUES_POLICIES)[number];

export interface SchedulingPolicySettings {
  /**
   * PREFERENCE_POLICY: Respect (default) tries preferred node affinity, preferred pod (anti-)affinity and
   * ScheduleAnyway spreads, relaxing them one at a time only when they cannot be met; Ignore leaves them
   * out of every solve from the start.
   */
  preferencePolicy: PreferencePolicy;
  /**
   * MIN_VALUES_POLICY: Strict (default) creates no NodeClaim whose instance types fall below a
   * requirement's minValues; BestEffort creates it with the minValues lowered to what is left, annotated
   * karpenter.sh/nodeclaim-min-values-relaxed=true.
   */
  minValuesPolicy: MinValuesPolicy;
}

export const DEFAULT_SCHEDULING_POLICY_SETTINGS: SchedulingPolicySettings = {
  preferencePolicy: 'Respect',
  minValuesPolicy: 'Strict',
};

/**
 * Karpenter's feature gates (FEATURE_GATES="SpotToSpotConsolidation=true,NodeRepair=false"): the ones this
 * app implements, and upstream's others, which may only be set to false here.
 */
export const SUPPORTED_FEATURE_GATES = [
  'SpotToSpotConsolidation',
  'NodeOverlay',
  'CapacityBuffer',
  'ReservedCapacity',
  'NodeRepair',
] as const;
const UNSUPPORTED_FEATURE_GATES = ['StaticCapacity'] as const;
export type FeatureGate = (typeof SUPPORTED_FEATURE_GATES)[number];

/**
 * Launch polling defaults, checked with `npm run bench` (launch polling): a launch polls every 5 s (or
 * ARM's Retry-After) while few are in flight, and the interval grows with the cluster's launches in
 * flight so 1,000 of them stay inside Compute's 5,000 operation-status GETs per minute.
 */
export const LAUNCH_POLL_DEFAULTS = {
  pollIntervalSeconds: 5,
  maxPollIntervalSeconds: 60,
  deadlineMinutes: 15,
} as const;

export class SettingsError extends Error {
  override readonly name = 'SettingsError';
}

/** Reads and validates settings from an environment. Throws SettingsError listing every problem found. */
export function loadSettings(env: Env = process.env): Settings {
  const problems: string[] = [];
  const reader = new EnvReader(env, problems);
  const gates = reader.featureGates('FEATURE_GATES');
  const spotToSpot = spotToSpotConsolidation(gates, reader, problems);
  const reservationGroups = parseCapacityReservationGroupIds(
    'CAPACITY_RESERVATION_GROUP_IDS',
    reader.optional('CAPACITY_RESERVATION_GROUP_IDS'),
  );
  problems.push(...reservationGroups.problems);

  const kubeconfigPath = reader.optional('KUBECONFIG');
  const apiServerUrl = reader.optional('CLUSTER_ENDPOINT');
  let kubernetes: Settings['kubernetes'];
  if (kubeconfigPath) {
    kubernetes = { mode: 'kubeconfig', kubeconfigPath };
  } else if (apiServerUrl) {
    kubernetes = {
      mode: 'entra',
      apiServerUrl: reader.url('CLUSTER_ENDPOINT'),
      caCertPem: reader.pem('KUBE_CA_CERT'),
      // The AKS AAD server application; the managed identity needs an Azure RBAC role on the cluster.
      tokenScope: reader.optional('KUBE_TOKEN_SCOPE') ?? '6dae42f8-4368-4678-94ff-3960e28e3630/.default',
    };
  } else {
    problems.push(
      'KUBECONFIG or CLUSTER_ENDPOINT (alias KUBE_API_SERVER_URL) must be set (a kubeconfig path, or the API server URL + KUBE_CA_CERT)',
    );
    kubernetes = { mode: 'kubeconfig', kubeconfigPath: '' };
  }

  const settings: Settings = {
    clusterName: reader.name('CLUSTER_NAME'),
    systemNamespace: reader.matching(
      'SYSTEM_NAMESPACE',
      /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/,
      'a namespace name (a DNS label: up to 63 lower-case letters, digits and "-")',
      DEFAULT_SYSTEM_NAMESPACE,
    ),
    azure: {
      subscriptionId: reader.guid('AZURE_SUBSCRIPTION_ID'),
      resourceGroup: reader.name('AZURE_NODE_RESOURCE_GROUP'),
      location: reader.name('LOCATION'),
      armEndpoint: reader.url('ARM_ENDPOINT', 'https://management.azure.com'),
      ...(reader.optional('ARM_CA_CERT') ? { armCaCertPem: reader.pem('ARM_CA_CERT') } : {}),
      retailPricesEndpoint: reader.url('RETAIL_PRICES_ENDPOINT', 'https://prices.azure.com'),
      defaultSubnetId: reader.subnetId('VNET_SUBNET_ID'),
      adminUsername: reader.matching(
        'LINUX_ADMIN_USERNAME',
        /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/,
        'a Linux user name (up to 64 letters, digits, "_", "-", ".", starting with a letter or "_")',
        'azureuser',
      ),
      sshPublicKey: reader.required('SSH_PUBLIC_KEY', 'an OpenSSH public key such as "ssh-ed25519 AAAA..."'),
    },
    kubernetes,
    cluster: clusterSettings(reader, problems),
    bootstrap: {
      // Nodes join through CLUSTER_ENDPOINT, as the Azure provider's do, unless this names another.
      apiServerUrl: reader.optional('BOOTSTRAP_API_SERVER_URL')
        ? reader.url('BOOTSTRAP_API_SERVER_URL')
        : reader.url('CLUSTER_ENDPOINT'),
      caCertPem: reader.pem('BOOTSTRAP_CA_CERT'),
    },
    storage: storageSettings(reader, problems),
    queues: {
      events: reader.queueName('EVENTS_QUEUE_NAME', 'nodeclaim-events'),
    },
    unavailableOfferingsTable: reader.tableName('UNAVAILABLE_OFFERINGS_TABLE', 'unavailableofferings'),
    decisionRecords: {
      table: reader.tableName('DECISION_RECORDS_TABLE', 'decisionrecords'),
      retentionHours: reader.number('DECISION_RECORD_RETENTION_HOURS', 24, 1, 720),
    },
    launch: {
      pollIntervalSeconds: reader.number(
        'LAUNCH_POLL_INTERVAL_SECONDS',
        LAUNCH_POLL_DEFAULTS.pollIntervalSeconds,
        0.1,
        300,
      ),
      maxPollIntervalSeconds: reader.number(
        'LAUNCH_MAX_POLL_INTERVAL_SECONDS',
        LAUNCH_POLL_DEFAULTS.maxPollIntervalSeconds,
        0.1,
        600,
      ),
      deadlineMinutes: reader.number(
        'LAUNCH_DEADLINE_MINUTES',
        LAUNCH_POLL_DEFAULTS.deadlineMinutes,
        0.05,
        120,
      ),
      skuCacheSeconds: reader.number('SKU_CACHE_SECONDS', 3600, 0, 86_400),
      nodeImageCacheSeconds: reader.number('NODE_IMAGE_CACHE_SECONDS', 3600, 0, 86_400),
    },
    lifecycle: {
      sweepSchedule: reader.optional('SWEEP_SCHEDULE') ?? DEFAULT_SWEEP_SCHEDULE,
      registrationTimeoutMinutes: reader.number('REGISTRATION_TIMEOUT_MINUTES', 15, 0.05, 240),
    },
    disruption: {
      replacementPollSeconds: reader.number(
        'REPLACEMENT_POLL_SECONDS',
        DEFAULT_DISRUPTION_SETTINGS.replacementPollSeconds,
        0.1,
        300,
      ),
      replacementFallbackSeconds: reader.number(
        'REPLACEMENT_FALLBACK_SECONDS',
        DEFAULT_DISRUPTION_SETTINGS.replacementFallbackSeconds,
        1,
        3600,
      ),
      replacementTimeoutMinutes: reader.number(
        'REPLACEMENT_TIMEOUT_MINUTES',
        DEFAULT_DISRUPTION_SETTINGS.replacementTimeoutMinutes,
        0.05,
        1440,
      ),
      replacementBackoffMinutes: reader.number(
        'REPLACEMENT_BACKOFF_MINUTES',
        DEFAULT_DISRUPTION_SETTINGS.replacementBackoffMinutes,
        0,
        1440,
      ),
      drainPollSeconds: reader.number(
        'DRAIN_POLL_SECONDS',
        DEFAULT_DISRUPTION_SETTINGS.drainPollSeconds,
        0.1,
        300,
      ),
      orphanVmGraceMinutes: reader.number(
        'ORPHAN_VM_GRACE_MINUTES',
        DEFAULT_DISRUPTION_SETTINGS.orphanVmGraceMinutes,
        0,
        1440,
      ),
      consolidationValidationSeconds: reader.number(
        'CONSOLIDATION_VALIDATION_SECONDS',
        DEFAULT_DISRUPTION_SETTINGS.consolidationValidationSeconds,
        0,
        600,
      ),
      spotToSpotConsolidation: spotToSpot,
    },
    requestTimeoutSeconds: reader.number('REQUEST_TIMEOUT_SECONDS', 30, 0.1, 600),
    metricsPerNode: reader.boolean('METRICS_PER_NODE', false),
    provisioning: {
      batchIdleMs: reader.duration('BATCH_IDLE_DURATION', DEFAULT_PROVISIONING_SETTINGS.batchIdleMs),
      batchMaxMs: reader.duration('BATCH_MAX_DURATION', DEFAULT_PROVISIONING_SETTINGS.batchMaxMs),
      ...optionalSelector(reader.optional('PROVISIONING_SELECTOR')),
    },
    scheduling: {
      preferencePolicy: reader.oneOf(
        'PREFERENCE_POLICY',
        PREFERENCE_POLICIES,
        DEFAULT_SCHEDULING_POLICY_SETTINGS.preferencePolicy,
      ),
      minValuesPolicy: reader.oneOf(
        'MIN_VALUES_POLICY',
        MIN_VALUES_POLICIES,
        DEFAULT_SCHEDULING_POLICY_SETTINGS.minValuesPolicy,
      ),
    },
    repair: repairSettings(reader, problems, gates.get('NodeRepair') ?? false),
    rollout: rolloutSettings(reader, problems),
    featureGates: {
      SpotToSpotConsolidation: spotToSpot,
      NodeOverlay: gates.get('NodeOverlay') ?? false,
      CapacityBuffer: gates.get('CapacityBuffer') ?? false,
      // Beta upstream, so on unless set: without groups named below it has nothing to offer.
      ReservedCapacity: gates.get('ReservedCapacity') ?? true,
      NodeRepair: gates.get('NodeRepair') ?? false,
    },
    capacityReservationGroups: reservationGroups.groups,
    ...explainSettings(reader, problems),
  };

  for (const group of settings.capacityReservationGroups) {
    // The VM PUT goes through the app's subscription, and a group shared from another subscription
    // needs that subscription's sharing set up, which this app does not check: refused until it does.
    if (group.subscriptionId.toLowerCase() !== settings.azure.subscriptionId.toLowerCase())
      problems.push(
        `CAPACITY_RESERVATION_GROUP_IDS names ${group.id}, outside AZURE_SUBSCRIPTION_ID ${settings.azure.subscriptionId}: only groups of the app's subscription are supported`,
      );
  }
  if (settings.launch.maxPollIntervalSeconds < settings.launch.pollIntervalSeconds) {
    problems.push('LAUNCH_MAX_POLL_INTERVAL_SECONDS must be at least LAUNCH_POLL_INTERVAL_SECONDS');
  }
  if (settings.provisioning.batchMaxMs < settings.provisioning.batchIdleMs) {
    problems.push('BATCH_MAX_DURATION must be at least BATCH_IDLE_DURATION');
  }
  if (problems.length > 0) {
    throw new SettingsError(`Invalid settings:\n  - ${problems.join('\n  - ')}`);
  }
  return settings;
}

function clusterSettings(reader: EnvReader, problems: string[]): ClusterSettings {
  const kubernetesVersion = reader.required(
    'KUBERNETES_VERSION',
    'the cluster\'s Kubernetes version, e.g. "1.33.2"',
  );
  if (kubernetesVersion && !/^v?\d+\.\d+\.\d+$/.test(kubernetesVersion)) {
    problems.push(
      `KUBERNETES_VERSION is ${JSON.stringify(kubernetesVersion)}: expected major.minor.patch, e.g. "1.33.2"`,
    );
  }
  const network: NetworkProfile = {
    plugin: reader.oneOf('NETWORK_PLUGIN', ['azure', 'none'], 'azure'),
    pluginMode: reader.oneOf('NETWORK_PLUGIN_MODE', ['overlay', ''], 'overlay'),
    dataplane: reader.oneOf('NETWORK_DATAPLANE', ['azure', 'cilium'], 'cilium'),
  };
  const mode = networkMode(network);
  if (typeof mode !== 'string')
    problems.push(`NETWORK_PLUGIN / NETWORK_PLUGIN_MODE / NETWORK_DATAPLANE: ${mode.problem}`);
  const nodeSecurityGroupId = reader.matching(
    'NODE_SECURITY_GROUP_ID',
    /^\/subscriptions\/[^/]+\/resourceGroups\/[^/]+\/providers\/Microsoft\.Network\/networkSecurityGroups\/[^/]+$/i,
    "the node NSG's resource ID (…/providers/Microsoft.Network/networkSecurityGroups/aks-agentpool-<id>-nsg)",
  );
  const tenantId = reader.optional('AKS_TENANT_ID');
  const vnetGuid = reader.optional('VNET_GUID');
  return {
    kubernetesVersion: kubernetesVersion.replace(/^v/, ''),
    ...(tenantId ? { tenantId: reader.guid('AKS_TENANT_ID') } : {}),
    network,
    networkMode: typeof mode === 'string' ? mode : 'azure-cni-overlay',
    dnsServiceIp: reader.matching(
      'DNS_SERVICE_IP',
      /^\d{1,3}(\.\d{1,3}){3}$/,
      'an IPv4 address, e.g. "10.0.0.10"',
      '10.0.0.10',
    ),
    ...(vnetGuid ? { vnetGuid: reader.guid('VNET_GUID') } : {}),
    nodeSecurityGroupId,
    attachNsgToNic: reader.oneOf('ATTACH_NSG_TO_NIC', ['true', 'false'], 'false') === 'true',
    kubeletIdentity: {
      resourceId: reader.matching(
        'KUBELET_IDENTITY_RESOURCE_ID',
        /^\/subscriptions\/[^/]+\/resourceGroups\/[^/]+\/providers\/Microsoft\.ManagedIdentity\/userAssignedIdentities\/[^/]+$/i,
        "the kubelet identity's resource ID (identityProfile.kubeletidentity.resourceId of the cluster)",
      ),
      clientId: reader.guid('KUBELET_IDENTITY_CLIENT_ID'),
    },
    loadBalancerBackendPoolIds: (reader.optional('LOAD_BALANCER_BACKEND_POOL_IDS') ?? '')
      .split(',')
      .map((id) => id.trim())
      .filter((id) => id !== '')
      .map((id) => {
        if (
          !/^\/subscriptions\/[^/]+\/resourceGroups\/[^/]+\/providers\/Microsoft\.Network\/loadBalancers\/[^/]+\/backendAddressPools\/[^/]+$/i.test(
            id,
          )
        ) {
          problems.push(
            `LOAD_BALANCER_BACKEND_POOL_IDS has ${JSON.stringify(id)}: expected load balancer backend pool IDs, comma-separated`,
          );
        }
        return id;
      }),
    vmMemoryOverheadFraction: reader.number(
      'VM_MEMORY_OVERHEAD_PERCENT',
      VM_MEMORY_OVERHEAD_FRACTION,
      0,
      0.5,
    ),
  };
}

/**
 * FEATURE_GATES=SpotToSpotConsolidation=true (upstream's way), or SPOT_TO_SPOT_CONSOLIDATION (this app's
 * former setting, still read); both set must agree.
 */
function spotToSpotConsolidation(
  gates: ReadonlyMap<FeatureGate, boolean>,
  reader: EnvReader,
  problems: string[],
): boolean {
  const legacy = reader.optional('SPOT_TO_SPOT_CONSOLIDATION');
  const fromLegacy = legacy === undefined ? undefined : reader.boolean('SPOT_TO_SPOT_CONSOLIDATION', false);
  const fromGate = gates.get('SpotToSpotConsolidation');
  if (fromGate !== undefined && fromLegacy !== undefined && fromGate !== fromLegacy) {
    problems.push(
      `FEATURE_GATES says SpotToSpotConsolidation=${fromGate} but its alias SPOT_TO_SPOT_CONSOLIDATION is ${legacy}: set one`,
    );
  }
  return fromGate ?? fromLegacy ?? false;
}

function repairSettings(reader: EnvReader, problems: string[], enabled: boolean): RepairSettings {
  const written = reader.optional('REPAIR_POLICIES');
  let policies = DEFAULT_REPAIR_SETTINGS.policies;
  if (written !== undefined) {
    const parsed = parseRepairPolicies(written);
    if ('problems' in parsed) problems.push(...parsed.problems.map((p) => `REPAIR_POLICIES ${p}`));
    else policies = parsed.policies;
  }
  return {
    enabled,
    policies,
    maxReboots: reader.number('REPAIR_MAX_REBOOTS', DEFAULT_REPAIR_SETTINGS.maxReboots, 0, 10),
    rebootRecoverySeconds: reader.number(
      'REPAIR_REBOOT_RECOVERY_SECONDS',
      DEFAULT_REPAIR_SETTINGS.rebootRecoverySeconds,
      0.1,
      3600,
    ),
    preemptionDrainSeconds: reader.number(
      'PREEMPTION_DRAIN_SECONDS',
      DEFAULT_REPAIR_SETTINGS.preemptionDrainSeconds,
      0,
      600,
    ),
  };
}

function rolloutSettings(reader: EnvReader, problems: string[]): RolloutSettings {
  const defaults = DEFAULT_ROLLOUT_SETTINGS;
  const written = reader.optional('ROLLOUT_CANARY');
  const canary = written === undefined ? defaults.canary : parseRolloutCount(written);
  if (canary === undefined) {
    problems.push(
      `ROLLOUT_CANARY is ${JSON.stringify(written)}: expected a number of nodes (1, 2, …) or a percentage of the drifted nodes from 1% to 100% ("10%")`,
    );
  }
  const maxPodRestarts = reader.number('ROLLOUT_MAX_POD_RESTARTS', defaults.maxPodRestarts, 1, 10_000);
  if (!Number.isInteger(maxPodRestarts)) {
    problems.push(`ROLLOUT_MAX_POD_RESTARTS is ${maxPodRestarts}: expected a whole number of restarts`);
  }
  return {
    policy: reader.oneOf('ROLLOUT_POLICY', ROLLOUT_POLICIES, defaults.policy),
    canary: canary ?? defaults.canary,
    pollSeconds: reader.number('ROLLOUT_POLL_SECONDS', defaults.pollSeconds, 0.1, 3600),
    soakSeconds: reader.number('ROLLOUT_SOAK_SECONDS', defaults.soakSeconds, 0, 86_400),
    initializedWithinSeconds: reader.number(
      'ROLLOUT_INITIALIZED_WITHIN_SECONDS',
      defaults.initializedWithinSeconds,
      1,
      86_400,
    ),
    podReadyWithinSeconds: reader.number(
      'ROLLOUT_POD_READY_WITHIN_SECONDS',
      defaults.podReadyWithinSeconds,
      1,
      86_400,
    ),
    maxPodRestarts,
  };
}

function optionalSelector(selector: string | undefined): { selector?: string } {
  return selector ? { selector } : {};
}

/** A connection string whose account key is empty authenticates nothing (`AccountKey=;`). */
const keylessConnectionString = /(^|;)\s*AccountKey\s*=\s*(;|$)/i;

function storageSettings(reader: EnvReader, problems: string[]): Settings['storage'] {
  const accountName = reader.optional('AzureWebJobsStorage__accountName');
  // Some deployment tools write a keyless AzureWebJobsStorage beside the identity-based settings; the
  // identity is then the only working credential, so that string must not win.
  const written = reader.optional('AzureWebJobsStorage');
  const connectionString =
    written && accountName && keylessConnectionString.test(written) ? undefined : written;
  if (!connectionString && !accountName) {
    problems.push(
      'AzureWebJobsStorage (a connection string) or AzureWebJobsStorage__accountName (identity-based) must be set',
    );
  }
  const serviceUri = (name: string): string | undefined =>
    reader.optional(name) ? reader.url(name).replace(/\/+$/, '') : undefined;
  const queueServiceUri = serviceUri('AzureWebJobsStorage__queueServiceUri');
  const tableServiceUri = serviceUri('AzureWebJobsStorage__tableServiceUri');
  return {
    ...(connectionString ? { connectionString } : {}),
    ...(accountName ? { accountName } : {}),
    ...(queueServiceUri ? { queueServiceUri } : {}),
    ...(tableServiceUri ? { tableServiceUri } : {}),
    ...(reader.optional('STORAGE_CA_CERT') ? { caCertPem: reader.pem('STORAGE_CA_CERT') } : {}),
  };
}

/** A loopback http:// URL: the only plain-HTTP JWKS accepted (the local Entra emulator's). */
const LOOPBACK_HTTP_URL = /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?(\/\S*)?$/;

function explainSettings(reader: EnvReader, problems: string[]): { explain?: ExplainAuthSettings } {
  // Both are read whether or not explain is on, so that a JWKS override without an audience is reported.
  const audience = reader.optional('EXPLAIN_AUDIENCE');
  const jwksOverride = reader.optional('EXPLAIN_JWKS_URI');
  if (jwksOverride !== undefined && !LOOPBACK_HTTP_URL.test(jwksOverride)) reader.url('EXPLAIN_JWKS_URI');
  if (audience === undefined) {
    if (jwksOverride !== undefined)
      problems.push(
        'EXPLAIN_JWKS_URI is set but EXPLAIN_AUDIENCE is not: explain is off without an audience',
      );
    return {};
  }
  const audiences = audience
    .split(',')
    .map((value) => value.trim())
    .filter((value) => value !== '');
  if (reader.optional('AKS_TENANT_ID') === undefined) {
    problems.push(
      "EXPLAIN_AUDIENCE is set but AKS_TENANT_ID is not: explain accepts the tokens of the cluster's tenant, AKS_TENANT_ID (a GUID)",
    );
    return {};
  }
  const tenantId = reader.guid('AKS_TENANT_ID');
  return { explain: { tenantId, audiences, jwksUri: jwksOverride ?? entraJwksUri(tenantId) } };
}

class EnvReader {
  private readonly reportedConflicts = new Set<string>();

  constructor(
    private readonly env: Env,
    private readonly problems: string[],
  ) {}

  /** A Go duration such as "1s" or "500ms", as Karpenter's BATCH_* settings are written; > 0. */
  duration(name: string, fallbackMs: number): number {
    const raw = this.optional(name);
    if (raw === undefined) return fallbackMs;
    try {
      const ms = parseFiniteDuration(raw);
      if (ms > 0) return ms;
      this.problems.push(`${name} must be a positive duration such as "1s", got ${JSON.stringify(raw)}`);
    } catch (error) {
      this.problems.push(`${name} must be a duration such as "1s" or "500ms": ${(error as Error).message}`);
    }
    return fallbackMs;
  }

  /** The setting's value, under its name or, if that is unset, under one of its aliases. */
  optional(name: string): string | undefined {
    return this.lookup(name)?.value;
  }

  private lookup(name: string): { value: string; from: string } | undefined {
    const names = [name, ...((SETTING_ALIASES as Record<string, readonly string[]>)[name] ?? [])];
    const found = names.flatMap((from) => {
      const value = this.env[from]?.trim();
      return value ? [{ value, from }] : [];
    });
    const [first] = found;
    const disagreeing = found.find((f) => f.value !== first?.value);
    if (first && disagreeing && !this.reportedConflicts.has(name)) {
      this.reportedConflicts.add(name);
      this.problems.push(
        `${first.from} and its alias ${disagreeing.from} are set to different values: set one`,
      );
    }
    return first;
  }

  /** What a problem with the setting calls it: the name it was given under. */
  private label(name: string): string {
    return this.lookup(name)?.from ?? name;
  }

  /** Karpenter's FEATURE_GATES: "Gate=true,Other=false"; a gate this app lacks may only be false. */
  featureGates(name: string): Map<FeatureGate, boolean> {
    const gates = new Map<FeatureGate, boolean>();
    for (const entry of (this.optional(name) ?? '').split(',').map((e) => e.trim())) {
      if (entry === '') continue;
      const [gate = '', raw = '', ...rest] = entry.split('=').map((p) => p.trim());
      const value = raw.toLowerCase();
      if (rest.length > 0 || (value !== 'true' && value !== 'false')) {
        this.problems.push(`${name} has ${JSON.stringify(entry)}: expected Gate=true or Gate=false`);
      } else if ((SUPPORTED_FEATURE_GATES as readonly string[]).includes(gate)) {
        gates.set(gate as FeatureGate, value === 'true');
      } else if ((UNSUPPORTED_FEATURE_GATES as readonly string[]).includes(gate)) {
        if (value === 'true')
          this.problems.push(`${name}: this app has no ${gate} feature; set ${gate}=false or leave it out`);
      } else {
        this.problems.push(
          `${name} has unknown gate ${JSON.stringify(gate)}: known are ${[...SUPPORTED_FEATURE_GATES, ...UNSUPPORTED_FEATURE_GATES].join(', ')}`,
        );
      }
    }
    return gates;
  }

  required(name: string, what: string, fallback?: string): string {
    const value = this.optional(name) ?? fallback;
    if (value === undefined) {
      const retired = (RETIRED_SETTING_ALIASES as Record<string, { alias: string; why: string }>)[name];
      if (retired && this.env[retired.alias]?.trim()) {
        this.problems.push(
          `${name} is missing; ${retired.alias} is set, but is no longer read as ${name} (${retired.why}): set ${name} to ${what}`,
        );
        return '';
      }
      const aliases = (SETTING_ALIASES as Record<string, readonly string[]>)[name] ?? [];
      const alias = aliases.length > 0 ? ` (alias ${aliases.join(', ')})` : '';
      this.problems.push(`${name} is missing${alias}: set it to ${what}`);
      return '';
    }
    return value;
  }

  /** Empty is the fallback, unless empty is one of the allowed values (NETWORK_PLUGIN_MODE's node-subnet). */
  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const raw = this.env[name];
    if (raw === undefined || (raw.trim() === '' && !(allowed as readonly string[]).includes('')))
      return fallback;
    const value = raw.trim();
    if ((allowed as readonly string[]).includes(value)) return value as T;
    this.problems.push(
      `${name} is ${JSON.stringify(value)}: expected one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`,
    );
    return fallback;
  }

  matching(name: string, pattern: RegExp, what: string, fallback?: string): string {
    const value = this.required(name, what, fallback);
    if (value && !pattern.test(value))
      this.problems.push(`${this.label(name)} is ${JSON.stringify(value)}: expected ${what}`);
    return value;
  }

  name(name: string): string {
    return this.matching(
      name,
      /^[A-Za-z0-9][A-Za-z0-9._()-]{0,89}$/,
      'a name of letters, digits, ".", "_", "-"',
    );
  }

  guid(name: string): string {
    return this.matching(name, /^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$/, 'a GUID');
  }

  url(name: string, fallback?: string): string {
    return this.matching(name, /^https:\/\/[^\s/]+(\/\S*)?$/, 'an https:// URL', fallback);
  }

  pem(name: string): string {
    const raw = this.required(name, 'a PEM certificate, or its base64 encoding');
    if (!raw) return raw;
    const pem = raw.includes('-----BEGIN') ? raw : Buffer.from(raw, 'base64').toString('utf8');
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
      this.problems.push(`${name} is not a PEM certificate (nor base64 of one)`);
    }
    return pem;
  }

  subnetId(name: string): string {
    return this.matching(
      name,
      /^\/subscriptions\/[^/]+\/resourceGroups\/[^/]+\/providers\/Microsoft\.Network\/virtualNetworks\/[^/]+\/subnets\/[^/]+$/i,
      'a subnet resource ID (/subscriptions/…/resourceGroups/…/providers/Microsoft.Network/virtualNetworks/…/subnets/…)',
    );
  }

  queueName(name: string, fallback: string): string {
    return this.matching(
      name,
      /^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$/,
      'a Storage queue name (3-63 lower-case letters, digits, "-")',
      fallback,
    );
  }

  tableName(name: string, fallback: string): string {
    return this.matching(
      name,
      /^[A-Za-z][A-Za-z0-9]{2,62}$/,
      'a Storage table name (3-63 letters and digits)',
      fallback,
    );
  }

  boolean(name: string, fallback: boolean): boolean {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    if (raw.toLowerCase() === 'true') return true;
    if (raw.toLowerCase() === 'false') return false;
    this.problems.push(`${name} is ${JSON.stringify(raw)}: expected true or false`);
    return fallback;
  }

  number(name: string, fallback: number, min: number, max: number): number {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || value > max) {
      this.problems.push(`${name} is ${JSON.stringify(raw)}: expected a number from ${min} to ${max}`);
      return fallback;
    }
    return value;
  }
}
