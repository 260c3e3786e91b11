// The Function App's settings for a local stack: the same names the app reads in Azure, pointed at the
// emulators. One place builds them, so `npm start`, the end-to-end tests and the launch tests agree.

/** The emulated subscription; any GUID works, the ARM emulator accepts every subscription. */
export const LOCAL_SUBSCRIPTION_ID = '00000000-0000-0000-0000-000000000001';
/** An SSH key for the emulated VMs' osProfile; nothing ever connects with it. */
const EMULATOR_SSH_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAITestKeyForTheEmulatorOnly local';

export interface LocalAppSettingsInput {
  kubeconfigPath: string;
  armEndpoint: string;
  armCaCertPem: string;
  /** CA a node's kubelet would trust for the API server; the bootstrap data carries it. */
  bootstrapCaCertPem: string;
  storageConnectionString: string;
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
  /** How long a node whose replacement failed waits before it is tried again. */
  replacementBackoffMinutes?: number;
  /** How long a consolidation decision waits before it is checked again and acts. */
  consolidationValidationSeconds?: number;
}

export function localAppSettings(input: LocalAppSettingsInput): Record<string, string> {
  const subscriptionId = input.subscriptionId ?? LOCAL_SUBSCRIPTION_ID;
  const settings: Record<string, string> = {
    CLUSTER_NAME: input.clusterName ?? 'local',
    AZURE_SUBSCRIPTION_ID: subscriptionId,
    AZURE_RESOURCE_GROUP: input.resourceGroup ?? 'MC_local_nodes',
    AZURE_LOCATION: input.location ?? 'westus2',
    ARM_ENDPOINT: input.armEndpoint,
    ARM_CA_CERT: input.armCaCertPem,
    AZURE_SUBNET_ID: `/subscriptions/${subscriptionId}/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes`,
    NODE_SSH_PUBLIC_KEY: EMULATOR_SSH_KEY,
    KUBECONFIG: input.kubeconfigPath,
    BOOTSTRAP_API_SERVER_URL: 'https://127.0.0.1:6443',
    BOOTSTRAP_CA_CERT: input.bootstrapCaCertPem,
    BOOTSTRAP_TOKEN: 'abcdef.0123456789abcdef',
    AzureWebJobsStorage: input.storageConnectionString,
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
  if (input.replacementBackoffMinutes !== undefined)
    settings.REPLACEMENT_BACKOFF_MINUTES = String(input.replacementBackoffMinutes);
  if (input.consolidationValidationSeconds !== undefined)
    settings.CONSOLIDATION_VALIDATION_SECONDS = String(input.consolidationValidationSeconds);
  return settings;
}
