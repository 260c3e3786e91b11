// The Function App's settings for a local stack: the same names the app reads in Azure, pointed at the
// emulators. One place builds them, so `npm start`, the end-to-end tests and the launch tests agree.
import { KUBERNETES_VERSION } from '../control-plane/build.js';
import { AZURE_REPAIR_POLICIES, formatRepairPolicy } from '../../shared/decisions/node-repair/policies.js';

/** The emulated subscription; any GUID works, the ARM emulator accepts every subscription. */
export const LOCAL_SUBSCRIPTION_ID = '00000000-0000-0000-0000-000000000001';
/** An SSH key for the emulated VMs' osProfile; nothing ever connects with it. */
const EMULATOR_SSH_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAITestKeyForTheEmulatorOnly local';

/**
 * The AKS cluster a local stack pretends to be: its Kubernetes version is the local control plane's,
 * the network is Azure CNI overlay with Cilium (AKS's recommended mode), and the node NSG, kubelet
 * identity and load balancer live in the node resource group, where AKS puts them.
 */
export function localClusterSettings(subscriptionId: string, resourceGroup: string): Record<string, string> {
  const nodeGroup = `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/providers`;
  return {
    KUBERNETES_VERSION: KUBERNETES_VERSION.replace(/^v/, ''),
    NETWORK_PLUGIN: 'azure',
    NETWORK_PLUGIN_MODE: 'overlay',
    NETWORK_DATAPLANE: 'cilium',
    DNS_SERVICE_IP: '10.0.0.10',
    NODE_SECURITY_GROUP_ID: `${nodeGroup}/Microsoft.Network/networkSecurityGroups/aks-agentpool-10000000-nsg`,
    KUBELET_IDENTITY_RESOURCE_ID: `${nodeGroup}/Microsoft.ManagedIdentity/userAssignedIdentities/local-agentpool`,
    KUBELET_IDENTITY_CLIENT_ID: '00000000-0000-0000-0000-00000000c11e',
    LOAD_BALANCER_BACKEND_POOL_IDS: `${nodeGroup}/Microsoft.Network/loadBalancers/kubernetes/backendAddressPools/aksOutboundBackendPool`,
  };
}

export interface LocalAppSettingsInput {
  kubeconfigPath: string;
  armEndpoint: string;
  armCaCertPem: string;
  /** CA a node's kubelet would trust for the API server; the bootstrap data carries it. */
  bootstrapCaCertPem: string;
  /** AzureWebJobsStorage as a connection string (Azurite's); or, instead, `storageIdentity`. */
  storageConnectionString?: string;
  /**
   * An identity-based AzureWebJobsStorage, as in Azure: the account, the service URLs (the local storage
   * front's) and the CA that signed the front's certificate. The app authenticates with its credential.
   */
  storageIdentity?: {
    accountName: string;
    queueServiceUri: string;
    tableServiceUri: string;
    caCertPem: string;
  };
  queueName: string;
  unavailableOfferingsTable: string;
  clusterName?: string;
  subscriptionId?: string;
  resourceGroup?: string;
  location?: string;
  pollIntervalSeconds?: number;
  maxPollIntervalSeconds?: number;
  sweepSchedule?: string;
  /** How often replacement and drain orchestrations look again. */
  disruptionPollSeconds?: number;
  /** How long a disruption waits for its replacements' wakes before it looks itself. */
  replacementFallbackSeconds?: number;
  /** How long a node whose replacement failed waits before it is tried again. */
  replacementBackoffMinutes?: number;
  /** How long a consolidation decision waits before it is checked again and acts. */
  consolidationValidationSeconds?: number;
  /** Karpenter's batch window, in ms (BATCH_IDLE_DURATION / BATCH_MAX_DURATION). */
  batchIdleMs?: number;
  batchMaxMs?: number;
  /** Label selector of the pods and NodePools this stack provisions for (stacks sharing a cluster). */
  provisioningSelector?: string;
  /**
   * FEATURE_GATES=NodeRepair=true with these timings (scaled by the stack's speed): the Azure provider's
   * repair policies with Ready's toleration shortened to `readyTolerationSeconds`.
   */
  nodeRepair?: {
    readyTolerationSeconds: number;
    rebootRecoverySeconds: number;
    preemptionDrainSeconds: number;
  };
  /** ROLLOUT_* timings (scaled by the stack's speed); absent: the app's defaults. */
  rollout?: {
    pollSeconds: number;
    soakSeconds: number;
    initializedWithinSeconds: number;
    podReadyWithinSeconds: number;
  };
}

export function localAppSettings(input: LocalAppSettingsInput): Record<string, string> {
  const subscriptionId = input.subscriptionId ?? LOCAL_SUBSCRIPTION_ID;
  const resourceGroup = input.resourceGroup ?? 'MC_local_nodes';
  const settings: Record<string, string> = {
    ...localClusterSettings(subscriptionId, resourceGroup),
    CLUSTER_NAME: input.clusterName ?? 'local',
    AZURE_SUBSCRIPTION_ID: subscriptionId,
    AZURE_NODE_RESOURCE_GROUP: resourceGroup,
    LOCATION: input.location ?? 'westus2',
    ARM_ENDPOINT: input.armEndpoint,
    ARM_CA_CERT: input.armCaCertPem,
    // The ARM emulator also serves the Retail Prices API (/api/retail/prices), under the same CA.
    RETAIL_PRICES_ENDPOINT: input.armEndpoint,
    VNET_SUBNET_ID: `/subscriptions/${subscriptionId}/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes`,
    SSH_PUBLIC_KEY: EMULATOR_SSH_KEY,
    KUBECONFIG: input.kubeconfigPath,
    BOOTSTRAP_API_SERVER_URL: 'https://127.0.0.1:6443',
    BOOTSTRAP_CA_CERT: input.bootstrapCaCertPem,
    ...storageAppSettings(input),
    EVENTS_QUEUE_NAME: input.queueName,
    UNAVAILABLE_OFFERINGS_TABLE: input.unavailableOfferingsTable,
  };
  if (input.pollIntervalSeconds !== undefined)
    settings.LAUNCH_POLL_INTERVAL_SECONDS = String(input.pollIntervalSeconds);
  if (input.maxPollIntervalSeconds !== undefined)
    settings.LAUNCH_MAX_POLL_INTERVAL_SECONDS = String(input.maxPollIntervalSeconds);
  if (input.sweepSchedule !== undefined) settings.SWEEP_SCHEDULE = input.sweepSchedule;
  if (input.disruptionPollSeconds !== undefined) {
    settings.REPLACEMENT_POLL_SECONDS = String(input.disruptionPollSeconds);
    settings.DRAIN_POLL_SECONDS = String(input.disruptionPollSeconds);
  }
  if (input.replacementFallbackSeconds !== undefined)
    settings.REPLACEMENT_FALLBACK_SECONDS = String(input.replacementFallbackSeconds);
  if (input.replacementBackoffMinutes !== undefined)
    settings.REPLACEMENT_BACKOFF_MINUTES = String(input.replacementBackoffMinutes);
  if (input.consolidationValidationSeconds !== undefined)
    settings.CONSOLIDATION_VALIDATION_SECONDS = String(input.consolidationValidationSeconds);
  if (input.batchIdleMs !== undefined) settings.BATCH_IDLE_DURATION = `${Math.round(input.batchIdleMs)}ms`;
  if (input.batchMaxMs !== undefined) settings.BATCH_MAX_DURATION = `${Math.round(input.batchMaxMs)}ms`;
  if (input.provisioningSelector !== undefined) settings.PROVISIONING_SELECTOR = input.provisioningSelector;
  if (input.nodeRepair !== undefined) {
    settings.FEATURE_GATES = 'NodeRepair=true';
    settings.REPAIR_POLICIES = localRepairPolicies(input.nodeRepair.readyTolerationSeconds);
    settings.REPAIR_REBOOT_RECOVERY_SECONDS = String(input.nodeRepair.rebootRecoverySeconds);
    settings.PREEMPTION_DRAIN_SECONDS = String(input.nodeRepair.preemptionDrainSeconds);
  }
  if (input.rollout !== undefined) {
    settings.ROLLOUT_POLL_SECONDS = String(input.rollout.pollSeconds);
    settings.ROLLOUT_SOAK_SECONDS = String(input.rollout.soakSeconds);
    settings.ROLLOUT_INITIALIZED_WITHIN_SECONDS = String(input.rollout.initializedWithinSeconds);
    settings.ROLLOUT_POD_READY_WITHIN_SECONDS = String(input.rollout.podReadyWithinSeconds);
  }
  return settings;
}

/** REPAIR_POLICIES: the Azure provider's, with the Ready conditions' toleration set to `seconds`. */
export function localRepairPolicies(readyTolerationSeconds: number): string {
  return AZURE_REPAIR_POLICIES.map((policy) =>
    formatRepairPolicy(
      policy.conditionType === 'Ready'
        ? { ...policy, tolerationMs: Math.round(readyTolerationSeconds * 1000) }
        : policy,
    ),
  ).join(',');
}

/** AzureWebJobsStorage as a connection string, or identity-based under the names the Functions host reads. */
function storageAppSettings(input: LocalAppSettingsInput): Record<string, string> {
  if (input.storageIdentity) {
    return {
      AzureWebJobsStorage__accountName: input.storageIdentity.accountName,
      AzureWebJobsStorage__credential: 'managedidentity',
      AzureWebJobsStorage__queueServiceUri: input.storageIdentity.queueServiceUri,
      AzureWebJobsStorage__tableServiceUri: input.storageIdentity.tableServiceUri,
      STORAGE_CA_CERT: input.storageIdentity.caCertPem,
    };
  }
  if (input.storageConnectionString === undefined)
    throw new Error('localAppSettings needs storageConnectionString or storageIdentity');
  return { AzureWebJobsStorage: input.storageConnectionString };
}
