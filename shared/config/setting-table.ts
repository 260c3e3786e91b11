// The one list of every setting the Function App and the event bridge read, with where each deployment
// tool takes it from. Bicep and Terraform write the Function App's whole app-settings set on every run,
// so a setting that is not one of their inputs is lost at the next `azd provision` or `terraform apply`;
// test/unit/setting-table.test.ts holds the templates, the chart and azd to this list, and this list to
// the names the code reads. docs/settings.md shows it (`npm run docs:settings` writes that section).

/** Which program reads the setting: the Function App (Azure) or the event bridge (in the cluster). */
export type SettingReader = 'functions' | 'bridge';

/**
 * How a deployment tool provides a setting: as one of its inputs (the parameter's or variable's name, or
 * for azd the environment variable), computed from what it deploys or reads, or not at all, and why.
 */
export type SettingSource = { input: string } | { derived: string } | { absent: string };

export interface SettingRow {
  name: string;
  reader: SettingReader;
  /** What the app uses when the setting is unset or empty, as written in the environment; none: required or off. */
  default?: string;
  /**
   * A deployment input's own default where it differs from `default`, and why (an empty input that reads
   * the value from the cluster, a name the host needs that the app has no default for).
   */
  deploymentDefault?: { value: string; why: string };
  /** Former names still read (shared/config/settings.ts SETTING_ALIASES, and the legacy spot gate). */
  aliases?: readonly string[];
  description: string;
  bicep: SettingSource;
  terraform: SettingSource;
  /**
   * How azd sets it: the azd environment variable that feeds the Bicep input or, for the bridge, the
   * chart value (infra/hooks/postprovision.mjs). Required when `bicep` is an input or `chart` a value.
   */
  azd?: SettingSource;
  /** The chart's value path, or why the chart has none. */
  chart: { value: string } | { absent: string };
  /** Read by the Functions host, the Azure SDK or the telemetry agent rather than by this app's code. */
  platform?: true;
  /** What an empty value means, for the one setting where empty is a value of its own and not the default. */
  emptyMeans?: string;
}

const input = (name: string): SettingSource => ({ input: name });
const derived = (how: string): SettingSource => ({ derived: how });
const absent = (why: string): SettingSource => ({ absent: why });

const FUNCTIONS_NOT_IN_CHART = {
  absent: 'the Function App runs in Azure; the chart deploys the bridge and the RBAC in the cluster',
};
const BRIDGE_NOT_IN_AZURE = absent('the bridge runs in the cluster: a value of the chart');
const LOCAL_ONLY = (what: string): SettingSource => absent(`${what}; a deployment never needs it`);
const FROM_CLUSTER = (property: string): SettingSource => derived(`the AKS cluster's ${property}`);

/** Every setting either program reads, in the order docs/settings.md lists them. */
export const SETTING_TABLE: readonly SettingRow[] = [
  // Identity of the cluster and where its nodes go.
  {
    name: 'CLUSTER_NAME',
    reader: 'functions',
    description: "the cluster's name, written into every VM's tags (usually the AKS resource name)",
    bicep: input('clusterName'),
    terraform: input('cluster_name'),
    azd: derived("the AKS cluster's name (AKS_CLUSTER_NAME)"),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'SYSTEM_NAMESPACE',
    reader: 'functions',
    default: 'nodeclaim-system',
    description:
      "the namespace the chart is installed in: the sweep's and the disruption marks' Leases live there (the bridge's ServiceAccount namespace, which the federated credential trusts)",
    bicep: input('bridgeServiceAccountNamespace'),
    terraform: input('bridge_service_account_namespace'),
    azd: absent('postprovision installs the chart into nodeclaim-system, the default'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'AZURE_SUBSCRIPTION_ID',
    reader: 'functions',
    description: 'subscription of the node resource group',
    bicep: derived('subscription().subscriptionId: the subscription deployed to'),
    terraform: derived('data.azurerm_subscription.current: the subscription deployed to'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'AZURE_NODE_RESOURCE_GROUP',
    reader: 'functions',
    description:
      'resource group the VMs are created in (the AKS node resource group); the former alias AZURE_RESOURCE_GROUP is no longer read',
    bicep: input('nodeResourceGroupName'),
    terraform: input('node_resource_group_name'),
    azd: derived("the cluster's nodeResourceGroup"),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'LOCATION',
    reader: 'functions',
    aliases: ['AZURE_LOCATION'],
    description: "region of the nodes (the app's resources are deployed there too)",
    bicep: input('location'),
    terraform: input('location'),
    azd: input('AZURE_LOCATION'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'VNET_SUBNET_ID',
    reader: 'functions',
    aliases: ['AZURE_SUBNET_ID'],
    description: 'subnet for node NICs when the AKSNodeClass names none',
    bicep: input('nodeSubnetId'),
    terraform: input('node_subnet_id'),
    azd: input('NODE_SUBNET_ID'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'VNET_GUID',
    reader: 'functions',
    description: 'resourceGuid of the node VNet; Azure CNI Overlay nodes carry it as a label',
    bicep: input('vnetGuid'),
    terraform: input('vnet_guid'),
    azd: input('VNET_GUID'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'LINUX_ADMIN_USERNAME',
    reader: 'functions',
    default: 'azureuser',
    aliases: ['NODE_ADMIN_USERNAME'],
    description: "the node VMs' admin user (the Azure provider's setting)",
    bicep: input('nodeAdminUsername'),
    terraform: input('node_admin_username'),
    azd: input('LINUX_ADMIN_USERNAME'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'SSH_PUBLIC_KEY',
    reader: 'functions',
    aliases: ['NODE_SSH_PUBLIC_KEY'],
    description: "OpenSSH public key for the nodes' admin user",
    bicep: input('nodeSshPublicKey'),
    terraform: input('node_ssh_public_key'),
    azd: input('NODE_SSH_PUBLIC_KEY'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'VM_MEMORY_OVERHEAD_PERCENT',
    reader: 'functions',
    default: '0.075',
    description:
      "the share of a size's memory the guest does not see, taken off every instance type's memory before scheduling; a fraction, as the Azure provider writes it (0.075 is 7.5%)",
    bicep: input('vmMemoryOverheadPercent'),
    terraform: input('vm_memory_overhead_percent'),
    azd: input('VM_MEMORY_OVERHEAD_PERCENT'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  // The API server.
  {
    name: 'CLUSTER_ENDPOINT',
    reader: 'functions',
    aliases: ['KUBE_API_SERVER_URL'],
    deploymentDefault: { value: '', why: 'empty uses https://<cluster FQDN>:443' },
    description: 'the API server the functions call with an Entra token, and the one nodes join through',
    bicep: input('kubeApiServerUrl'),
    terraform: input('kube_api_server_url'),
    azd: input('CLUSTER_ENDPOINT'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'KUBE_CA_CERT',
    reader: 'functions',
    description: 'the cluster CA (PEM or its base64), for CLUSTER_ENDPOINT',
    bicep: input('kubeCaCert'),
    terraform: input('kube_ca_cert'),
    azd: input('KUBE_CA_CERT'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'KUBE_TOKEN_SCOPE',
    reader: 'functions',
    default: '6dae42f8-4368-4678-94ff-3960e28e3630/.default',
    description: "Entra scope of the API server's token (the AKS AAD server application)",
    bicep: input('kubeTokenScope'),
    terraform: input('kube_token_scope'),
    azd: input('KUBE_TOKEN_SCOPE'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'KUBECONFIG',
    reader: 'functions',
    description: 'a kubeconfig instead of CLUSTER_ENDPOINT + KUBE_CA_CERT',
    bicep: LOCAL_ONLY('the local and test mode'),
    terraform: LOCAL_ONLY('the local and test mode'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'BOOTSTRAP_API_SERVER_URL',
    reader: 'functions',
    deploymentDefault: { value: '', why: "empty uses CLUSTER_ENDPOINT's value, as the app does" },
    description: "the API server written into nodes' bootstrap data; CLUSTER_ENDPOINT's when unset",
    bicep: input('bootstrapApiServerUrl'),
    terraform: input('bootstrap_api_server_url'),
    azd: input('BOOTSTRAP_API_SERVER_URL'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'BOOTSTRAP_CA_CERT',
    reader: 'functions',
    deploymentDefault: { value: '', why: "empty uses KUBE_CA_CERT's value" },
    description: 'the CA (PEM or its base64) nodes trust for that API server',
    bicep: input('bootstrapCaCert'),
    terraform: input('bootstrap_ca_cert'),
    azd: input('BOOTSTRAP_CA_CERT'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  // What the cluster tells every node.
  {
    name: 'KUBERNETES_VERSION',
    reader: 'functions',
    deploymentDefault: { value: '', why: "empty reads the cluster's current version" },
    description: "the control plane's Kubernetes version (major.minor.patch): kubelet version, image rules",
    bicep: input('kubernetesVersion'),
    terraform: input('kubernetes_version'),
    azd: input('KUBERNETES_VERSION'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'NETWORK_PLUGIN',
    reader: 'functions',
    default: 'azure',
    description: "`azure` or `none`, as the cluster's networkProfile.networkPlugin",
    bicep: FROM_CLUSTER('networkProfile.networkPlugin'),
    terraform: FROM_CLUSTER('network_profile.network_plugin'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'NETWORK_PLUGIN_MODE',
    reader: 'functions',
    default: 'overlay',
    deploymentDefault: {
      value: '',
      why: 'empty reads the cluster\'s networkProfile.networkPluginMode; "none" writes the empty value (node-subnet)',
    },
    emptyMeans: 'node-subnet: pod IPs from the node subnet',
    description: '`overlay` (Azure CNI Overlay) or empty (node-subnet)',
    bicep: input('networkPluginMode'),
    terraform: input('network_plugin_mode'),
    azd: input('NETWORK_PLUGIN_MODE'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'NETWORK_DATAPLANE',
    reader: 'functions',
    default: 'cilium',
    deploymentDefault: { value: '', why: "empty reads the cluster's networkProfile.networkDataplane" },
    description: '`cilium` or `azure`',
    bicep: input('networkDataplane'),
    terraform: input('network_dataplane'),
    azd: input('NETWORK_DATAPLANE'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'DNS_SERVICE_IP',
    reader: 'functions',
    default: '10.0.0.10',
    description: "kube-dns's ClusterIP",
    bicep: FROM_CLUSTER('networkProfile.dnsServiceIP'),
    terraform: FROM_CLUSTER('network_profile.dns_service_ip'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'AKS_TENANT_ID',
    reader: 'functions',
    description:
      "Entra tenant written into the node's azure.json; explain accepts only this tenant's user tokens",
    bicep: derived("subscription().tenantId: the deployment's tenant"),
    terraform: derived("data.azurerm_subscription.current.tenant_id: the deployment's tenant"),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'NODE_SECURITY_GROUP_ID',
    reader: 'functions',
    description: 'the node NSG by resource ID',
    bicep: derived('nodeSecurityGroupName, in the node resource group'),
    terraform: derived('node_security_group_name, in the node resource group'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'ATTACH_NSG_TO_NIC',
    reader: 'functions',
    default: 'false',
    description: 'whether each NIC carries the node NSG itself: true on a VNet you brought',
    bicep: input('attachNsgToNic'),
    terraform: input('attach_nsg_to_nic'),
    azd: input('ATTACH_NSG_TO_NIC'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'KUBELET_IDENTITY_RESOURCE_ID',
    reader: 'functions',
    description: "the cluster's kubelet identity, attached to every VM",
    bicep: FROM_CLUSTER('identityProfile.kubeletidentity.resourceId'),
    terraform: FROM_CLUSTER('kubelet_identity.user_assigned_identity_id'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'KUBELET_IDENTITY_CLIENT_ID',
    reader: 'functions',
    description: "that identity's client ID",
    bicep: FROM_CLUSTER('identityProfile.kubeletidentity.clientId'),
    terraform: FROM_CLUSTER('kubelet_identity.client_id'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'LOAD_BALANCER_BACKEND_POOL_IDS',
    reader: 'functions',
    description:
      'backend pools each NIC joins (the outbound pool with outboundType loadBalancer), comma-separated',
    bicep: FROM_CLUSTER('networkProfile.outboundType'),
    terraform: FROM_CLUSTER('networkProfile.outboundType'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  // Azure endpoints.
  {
    name: 'ARM_ENDPOINT',
    reader: 'functions',
    default: 'https://management.azure.com',
    description: 'Azure Resource Manager of this cloud',
    bicep: derived('environment().resourceManager: the cloud deployed to'),
    terraform: input('arm_endpoint'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'ARM_CA_CERT',
    reader: 'functions',
    description: "a CA to trust for ARM and the Retail Prices API: the local emulator's",
    bicep: LOCAL_ONLY("the ARM emulator's CA"),
    terraform: LOCAL_ONLY("the ARM emulator's CA"),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'RETAIL_PRICES_ENDPOINT',
    reader: 'functions',
    default: 'https://prices.azure.com',
    description: 'Azure Retail Prices API, which VM prices are refreshed from every 12 h',
    bicep: input('retailPricesEndpoint'),
    terraform: input('retail_prices_endpoint'),
    azd: input('RETAIL_PRICES_ENDPOINT'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  // Storage, queue and task hub.
  {
    name: 'AzureWebJobsStorage',
    reader: 'functions',
    description: 'a storage connection string (Azurite)',
    bicep: absent(
      'holds a key; the deployed account has shared keys off and is reached with the app identity',
    ),
    terraform: absent(
      'holds a key; the deployed account has shared keys off and is reached with the app identity',
    ),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'AzureWebJobsStorage__accountName',
    reader: 'functions',
    description: 'the storage account of the host, the events queue and the offerings table (identity-based)',
    bicep: derived('the storage account the template creates'),
    terraform: derived('the storage account the template creates'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'AzureWebJobsStorage__queueServiceUri',
    reader: 'functions',
    description: 'the queue service; https://<accountName>.queue.core.windows.net when unset',
    bicep: LOCAL_ONLY("the local storage front's URL"),
    terraform: LOCAL_ONLY("the local storage front's URL"),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'AzureWebJobsStorage__tableServiceUri',
    reader: 'functions',
    description: 'the table service; https://<accountName>.table.core.windows.net when unset',
    bicep: LOCAL_ONLY("the local storage front's URL"),
    terraform: LOCAL_ONLY("the local storage front's URL"),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'STORAGE_CA_CERT',
    reader: 'functions',
    description: "a CA to trust for those URLs: the local storage front's",
    bicep: LOCAL_ONLY("the local storage front's CA"),
    terraform: LOCAL_ONLY("the local storage front's CA"),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'AzureWebJobsStorage__credential',
    reader: 'functions',
    platform: true,
    description: 'managedidentity: the host reaches its storage with the app identity',
    bicep: derived('managedidentity'),
    terraform: derived('managedidentity'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'AzureWebJobsStorage__clientId',
    reader: 'functions',
    platform: true,
    description: "the app identity's client ID, for the host's storage connection",
    bicep: derived('the app identity the template creates'),
    terraform: derived('the app identity the template creates'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'AZURE_CLIENT_ID',
    reader: 'functions',
    platform: true,
    description: "the app identity's client ID, for the Azure SDK's credential",
    bicep: derived('the app identity the template creates'),
    terraform: derived('the app identity the template creates'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'EVENTS_QUEUE_NAME',
    reader: 'functions',
    default: 'nodeclaim-events',
    description: 'the queue the bridge sends to and the functions read',
    bicep: input('eventsQueueName'),
    terraform: input('events_queue_name'),
    azd: input('EVENTS_QUEUE_NAME'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'UNAVAILABLE_OFFERINGS_TABLE',
    reader: 'functions',
    default: 'unavailableofferings',
    description: 'the table of recently failed offerings, shared by every instance',
    bicep: input('unavailableOfferingsTableName'),
    terraform: input('unavailable_offerings_table_name'),
    azd: input('UNAVAILABLE_OFFERINGS_TABLE'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'DECISION_RECORDS_TABLE',
    reader: 'functions',
    default: 'decisionrecords',
    description: 'the table where provisioning windows and disruption passes record what they decided',
    bicep: input('decisionRecordsTableName'),
    terraform: input('decision_records_table_name'),
    azd: input('DECISION_RECORDS_TABLE'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'DECISION_RECORD_RETENTION_HOURS',
    reader: 'functions',
    default: '24',
    description: 'how long a decision record is kept for explain',
    bicep: input('decisionRecordRetentionHours'),
    terraform: input('decision_record_retention_hours'),
    azd: input('DECISION_RECORD_RETENTION_HOURS'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'DURABLE_TASK_HUB',
    reader: 'functions',
    deploymentDefault: {
      value: 'nodeclaims',
      why: 'the host needs a task hub name (host.json); the app has no default',
    },
    description: 'the Durable Functions task hub (letters and digits)',
    bicep: input('durableTaskHubName'),
    terraform: input('durable_task_hub_name'),
    azd: input('DURABLE_TASK_HUB'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  // The Durable backend: host.json's values, overridden by AzureFunctionsJobHost__<path> settings so the
  // deployment chooses it (durableBackend / durable_backend, an infrastructure input below).
  {
    name: 'AzureFunctionsJobHost__extensions__durableTask__storageProvider__partitionCount',
    reader: 'functions',
    platform: true,
    default: '4',
    description:
      "host.json's storageProvider.partitionCount: the Azure Storage task hub's control-queue partitions (1-16), the most instances that run orchestrations at once; fixed once the task hub exists",
    bicep: input('durablePartitionCount'),
    terraform: input('durable_partition_count'),
    azd: input('DURABLE_PARTITION_COUNT'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'AzureFunctionsJobHost__extensions__durableTask__storageProvider__type',
    reader: 'functions',
    platform: true,
    description:
      "host.json's storageProvider.type: azureManaged, the Durable Task Scheduler, with durableBackend=DurableTaskScheduler; unset otherwise, leaving host.json's AzureStorage",
    bicep: derived('azureManaged when durableBackend is DurableTaskScheduler, else not written'),
    terraform: derived('azureManaged when durable_backend is DurableTaskScheduler, else not written'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'AzureFunctionsJobHost__extensions__durableTask__storageProvider__connectionStringName',
    reader: 'functions',
    platform: true,
    description:
      "host.json's storageProvider.connectionStringName with the Durable Task Scheduler: the setting that holds its connection, DURABLE_TASK_SCHEDULER_CONNECTION_STRING",
    bicep: derived('with durableBackend=DurableTaskScheduler only'),
    terraform: derived('with durable_backend=DurableTaskScheduler only'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'DURABLE_TASK_SCHEDULER_CONNECTION_STRING',
    reader: 'functions',
    platform: true,
    description:
      "the Durable Task Scheduler's connection: Endpoint=<scheduler endpoint>;Authentication=ManagedIdentity;ClientID=<app identity> (no key: the scheduler accepts identities only)",
    bicep: derived(
      'the scheduler the template creates and the app identity, with durableBackend=DurableTaskScheduler only',
    ),
    terraform: derived(
      'the scheduler the template creates and the app identity, with durable_backend=DurableTaskScheduler only',
    ),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  // Telemetry.
  {
    name: 'APPLICATIONINSIGHTS_CONNECTION_STRING',
    reader: 'functions',
    description: 'where metrics and logs go',
    bicep: derived('the Application Insights component the template creates'),
    terraform: derived('the Application Insights component the template creates'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'APPLICATIONINSIGHTS_AUTHENTICATION_STRING',
    reader: 'functions',
    description: 'Entra authentication of that telemetry with the app identity',
    bicep: derived('the app identity the template creates'),
    terraform: derived('the app identity the template creates'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'BUILD_COMMIT',
    reader: 'functions',
    description: 'the commit label of karpenter_build_info',
    bicep: input('buildCommit'),
    terraform: input('build_commit'),
    azd: input('BUILD_COMMIT'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  // Launch, lifecycle and disruption timing.
  {
    name: 'LAUNCH_POLL_INTERVAL_SECONDS',
    reader: 'functions',
    default: '5',
    description: "the shortest wait between polls of a VM creation (or ARM's Retry-After)",
    bicep: input('launchPollIntervalSeconds'),
    terraform: input('launch_poll_interval_seconds'),
    azd: input('LAUNCH_POLL_INTERVAL_SECONDS'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'LAUNCH_MAX_POLL_INTERVAL_SECONDS',
    reader: 'functions',
    default: '60',
    description: 'the longest wait between those polls, with many launches in flight',
    bicep: input('launchMaxPollIntervalSeconds'),
    terraform: input('launch_max_poll_interval_seconds'),
    azd: input('LAUNCH_MAX_POLL_INTERVAL_SECONDS'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'LAUNCH_DEADLINE_MINUTES',
    reader: 'functions',
    default: '15',
    description: 'a VM creation not finished by then is abandoned',
    bicep: input('launchDeadlineMinutes'),
    terraform: input('launch_deadline_minutes'),
    azd: input('LAUNCH_DEADLINE_MINUTES'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'SKU_CACHE_SECONDS',
    reader: 'functions',
    default: '3600',
    description: "how long the region's VM size list is kept",
    bicep: input('skuCacheSeconds'),
    terraform: input('sku_cache_seconds'),
    azd: input('SKU_CACHE_SECONDS'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'NODE_IMAGE_CACHE_SECONDS',
    reader: 'functions',
    default: '3600',
    description: "how long a node image definition's published versions are kept",
    bicep: input('nodeImageCacheSeconds'),
    terraform: input('node_image_cache_seconds'),
    azd: input('NODE_IMAGE_CACHE_SECONDS'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'SWEEP_SCHEDULE',
    reader: 'functions',
    default: '*/15 * * * * *',
    description: 'NCRONTAB (with seconds) of the lifecycle sweep',
    bicep: input('sweepSchedule'),
    terraform: input('sweep_schedule'),
    azd: input('SWEEP_SCHEDULE'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'GC_SCHEDULE',
    reader: 'functions',
    default: '0 */5 * * * *',
    description: 'NCRONTAB (with seconds) of orphan VM collection',
    bicep: input('gcSchedule'),
    terraform: input('gc_schedule'),
    azd: input('GC_SCHEDULE'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'REGISTRATION_TIMEOUT_MINUTES',
    reader: 'functions',
    default: '15',
    description: 'a launched NodeClaim whose Node has not registered by then is deleted',
    bicep: input('registrationTimeoutMinutes'),
    terraform: input('registration_timeout_minutes'),
    azd: input('REGISTRATION_TIMEOUT_MINUTES'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'REPLACEMENT_POLL_SECONDS',
    reader: 'functions',
    default: '5',
    description: 'how often a replacement looks at its new NodeClaim',
    bicep: input('replacementPollSeconds'),
    terraform: input('replacement_poll_seconds'),
    azd: input('REPLACEMENT_POLL_SECONDS'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'REPLACEMENT_FALLBACK_SECONDS',
    reader: 'functions',
    default: '180',
    description:
      'how long a disruption waits for a wake from its replacements before it looks at them itself (doubled after each look that finds them on their way, up to 4×)',
    bicep: input('replacementFallbackSeconds'),
    terraform: input('replacement_fallback_seconds'),
    azd: input('REPLACEMENT_FALLBACK_SECONDS'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'REPLACEMENT_TIMEOUT_MINUTES',
    reader: 'functions',
    default: '30',
    description: 'a replacement not Initialized by then is abandoned and the old node put back in service',
    bicep: input('replacementTimeoutMinutes'),
    terraform: input('replacement_timeout_minutes'),
    azd: input('REPLACEMENT_TIMEOUT_MINUTES'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'REPLACEMENT_BACKOFF_MINUTES',
    reader: 'functions',
    default: '5',
    description: 'a node whose replacement failed is not tried again before this',
    bicep: input('replacementBackoffMinutes'),
    terraform: input('replacement_backoff_minutes'),
    azd: input('REPLACEMENT_BACKOFF_MINUTES'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'DRAIN_POLL_SECONDS',
    reader: 'functions',
    default: '5',
    description: 'how often termination retries evictions a PodDisruptionBudget refused',
    bicep: input('drainPollSeconds'),
    terraform: input('drain_poll_seconds'),
    azd: input('DRAIN_POLL_SECONDS'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'ORPHAN_VM_GRACE_MINUTES',
    reader: 'functions',
    default: '10',
    description: 'a tagged VM without a NodeClaim is deleted only once it is this old',
    bicep: input('orphanVmGraceMinutes'),
    terraform: input('orphan_vm_grace_minutes'),
    azd: input('ORPHAN_VM_GRACE_MINUTES'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'CONSOLIDATION_VALIDATION_SECONDS',
    reader: 'functions',
    default: '15',
    description: 'a consolidation decision is checked again this long after it was made, before it acts',
    bicep: input('consolidationValidationSeconds'),
    terraform: input('consolidation_validation_seconds'),
    azd: input('CONSOLIDATION_VALIDATION_SECONDS'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'REQUEST_TIMEOUT_SECONDS',
    reader: 'functions',
    default: '30',
    description: 'how long one ARM or Kubernetes API request may take before it is abandoned and retried',
    bicep: input('requestTimeoutSeconds'),
    terraform: input('request_timeout_seconds'),
    azd: input('REQUEST_TIMEOUT_SECONDS'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'METRICS_PER_NODE',
    reader: 'functions',
    default: 'false',
    description:
      'export the per-node gauges (karpenter_nodes_allocatable, operator_nodeclaim_status_condition_count), a series per node or NodeClaim each export; off by default, for the telemetry bill (docs/metrics.md)',
    bicep: input('metricsPerNode'),
    terraform: input('metrics_per_node'),
    azd: input('METRICS_PER_NODE'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  // Provisioning and scheduling (Karpenter's names).
  {
    name: 'BATCH_IDLE_DURATION',
    reader: 'functions',
    default: '1s',
    description: 'a provisioning window closes this long after the last new pending pod (a Go duration)',
    bicep: input('batchIdleDuration'),
    terraform: input('batch_idle_duration'),
    azd: input('BATCH_IDLE_DURATION'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'BATCH_MAX_DURATION',
    reader: 'functions',
    default: '10s',
    description: 'and at the latest this long after it opened',
    bicep: input('batchMaxDuration'),
    terraform: input('batch_max_duration'),
    azd: input('BATCH_MAX_DURATION'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'PROVISIONING_SELECTOR',
    reader: 'functions',
    description:
      "a label selector the pods and the NodePools' template labels must match, for several systems sharing one cluster; unset provisions for every pod",
    bicep: input('provisioningSelector'),
    terraform: input('provisioning_selector'),
    azd: input('PROVISIONING_SELECTOR'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'PREFERENCE_POLICY',
    reader: 'functions',
    default: 'Respect',
    description:
      "Karpenter's, for every solve: `Respect` tries preferred node affinity, preferred pod (anti-)affinity and ScheduleAnyway spreads, relaxing them one at a time only when they cannot be met; `Ignore` leaves them out from the start",
    bicep: input('preferencePolicy'),
    terraform: input('preference_policy'),
    azd: input('PREFERENCE_POLICY'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'MIN_VALUES_POLICY',
    reader: 'functions',
    default: 'Strict',
    description:
      'Karpenter\'s, for every solve: `Strict` creates no NodeClaim whose instance types fall below a requirement\'s minValues; `BestEffort` creates it with those minValues lowered to what is left, annotated `karpenter.sh/nodeclaim-min-values-relaxed: "true"`',
    bicep: input('minValuesPolicy'),
    terraform: input('min_values_policy'),
    azd: input('MIN_VALUES_POLICY'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'FEATURE_GATES',
    reader: 'functions',
    aliases: ['SPOT_TO_SPOT_CONSOLIDATION'],
    description:
      "Karpenter's `Gate=true|false` list: SpotToSpotConsolidation, NodeOverlay, CapacityBuffer, NodeRepair (off unless set), ReservedCapacity (on unless set to false)",
    bicep: input('featureGates'),
    terraform: input('feature_gates'),
    azd: input('FEATURE_GATES'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'CAPACITY_RESERVATION_GROUP_IDS',
    reader: 'functions',
    description:
      "Capacity Reservation Groups launches may use (ARM IDs in the app's subscription, comma-separated); the app is granted read and deploy on these only",
    bicep: input('capacityReservationGroupIds'),
    terraform: input('capacity_reservation_group_ids'),
    azd: input('CAPACITY_RESERVATION_GROUP_IDS'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  // Explain (docs/explain.md): who may ask, authenticated by Entra ID and authorized by the cluster's RBAC.
  {
    name: 'EXPLAIN_AUDIENCE',
    reader: 'functions',
    description:
      'the app registration users get explain tokens for: its client ID and/or Application ID URI (comma-separated); unset, explain answers 503',
    bicep: input('explainAudience'),
    terraform: input('explain_audience'),
    azd: input('EXPLAIN_AUDIENCE'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'EXPLAIN_JWKS_URI',
    reader: 'functions',
    description:
      "where explain reads the signing keys instead of the tenant's Entra JWKS: the local Entra emulator's (http:// only on loopback)",
    bicep: LOCAL_ONLY("the local Entra emulator's keys"),
    terraform: LOCAL_ONLY("the local Entra emulator's keys"),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  // Node repair (gate NodeRepair).
  {
    name: 'REPAIR_POLICIES',
    reader: 'functions',
    default:
      'Ready=False:10m:reboot,Ready=Unknown:10m:reboot,kubernetes.azure.com/NodeHealthy=False:0s:reboot,PreemptionScheduled=True:0s:preempted',
    description:
      "the Azure provider's RepairPolicies: `Type=Status[/Reason]:toleration[:action]`, action reboot, replace (the default) or preempted",
    bicep: input('repairPolicies'),
    terraform: input('repair_policies'),
    azd: input('REPAIR_POLICIES'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'REPAIR_MAX_REBOOTS',
    reader: 'functions',
    default: '1',
    description: 'reboots tried before a node whose policy allows one is replaced (0: replace at once)',
    bicep: input('repairMaxReboots'),
    terraform: input('repair_max_reboots'),
    azd: input('REPAIR_MAX_REBOOTS'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'REPAIR_REBOOT_RECOVERY_SECONDS',
    reader: 'functions',
    default: '300',
    description: 'how long a rebooted node has for its condition to clear before it is replaced',
    bicep: input('repairRebootRecoverySeconds'),
    terraform: input('repair_reboot_recovery_seconds'),
    azd: input('REPAIR_REBOOT_RECOVERY_SECONDS'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'PREEMPTION_DRAIN_SECONDS',
    reader: 'functions',
    default: '15',
    description:
      'a node with a spot eviction notice is drained once its replacement is Initialized, at the latest this long after the notice',
    bicep: input('preemptionDrainSeconds'),
    terraform: input('preemption_drain_seconds'),
    azd: input('PREEMPTION_DRAIN_SECONDS'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  // Rollouts of drift (docs/rollouts.md).
  {
    name: 'ROLLOUT_POLICY',
    reader: 'functions',
    default: 'Canary',
    description:
      "how a NodePool's drift rolls out: `Canary` (a canary, then waves at the Drifted budget, health gates between them) or `Immediate` (the budget alone); a NodePool's `karpenter.azure.com/rollout-policy` annotation wins",
    bicep: input('rolloutPolicy'),
    terraform: input('rollout_policy'),
    azd: input('ROLLOUT_POLICY'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'ROLLOUT_CANARY',
    reader: 'functions',
    default: '1',
    description:
      "the canary's size: a number of nodes, or a percentage of the NodePool's drifted nodes (`10%`, rounded up); at least 1",
    bicep: input('rolloutCanary'),
    terraform: input('rollout_canary'),
    azd: input('ROLLOUT_CANARY'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'ROLLOUT_POLL_SECONDS',
    reader: 'functions',
    default: '10',
    description: 'how often a rollout looks at its NodePool: the wave, the soak, the health gates',
    bicep: input('rolloutPollSeconds'),
    terraform: input('rollout_poll_seconds'),
    azd: input('ROLLOUT_POLL_SECONDS'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'ROLLOUT_SOAK_SECONDS',
    reader: 'functions',
    default: '300',
    description: 'how long the health gates watch a finished wave before the next one starts',
    bicep: input('rolloutSoakSeconds'),
    terraform: input('rollout_soak_seconds'),
    azd: input('ROLLOUT_SOAK_SECONDS'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'ROLLOUT_INITIALIZED_WITHIN_SECONDS',
    reader: 'functions',
    default: '600',
    description:
      "a replacement not Initialized this long after its creation fails the rollout's ReplacementFailed gate",
    bicep: input('rolloutInitializedWithinSeconds'),
    terraform: input('rollout_initialized_within_seconds'),
    azd: input('ROLLOUT_INITIALIZED_WITHIN_SECONDS'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'ROLLOUT_POD_READY_WITHIN_SECONDS',
    reader: 'functions',
    default: '300',
    description:
      "a pod on a replacement not Ready this long after it was scheduled fails the rollout's PodNotReady gate",
    bicep: input('rolloutPodReadyWithinSeconds'),
    terraform: input('rollout_pod_ready_within_seconds'),
    azd: input('ROLLOUT_POD_READY_WITHIN_SECONDS'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },
  {
    name: 'ROLLOUT_MAX_POD_RESTARTS',
    reader: 'functions',
    default: '3',
    description:
      "a pod on a replacement restarted this often, while pods there restart more than on the old nodes, fails the rollout's PodRestarts gate",
    bicep: input('rolloutMaxPodRestarts'),
    terraform: input('rollout_max_pod_restarts'),
    azd: input('ROLLOUT_MAX_POD_RESTARTS'),
    chart: FUNCTIONS_NOT_IN_CHART,
  },

  // The event bridge (bridge/config.ts), deployed by the chart.
  {
    name: 'CLUSTER_NAME',
    reader: 'bridge',
    description: "the Function App's CLUSTER_NAME: in logs and every message's source",
    bicep: BRIDGE_NOT_IN_AZURE,
    terraform: BRIDGE_NOT_IN_AZURE,
    azd: derived('the clusterName output'),
    chart: { value: 'settings.clusterName' },
  },
  {
    name: 'BRIDGE_QUEUE_SERVICE_URL',
    reader: 'bridge',
    description:
      'the queue service, https://<account>.queue.core.windows.net, reached with workload identity (the bridgeQueueServiceUrl output)',
    bicep: BRIDGE_NOT_IN_AZURE,
    terraform: BRIDGE_NOT_IN_AZURE,
    azd: derived('the bridgeQueueServiceUrl output'),
    chart: { value: 'settings.queueServiceUrl' },
  },
  {
    name: 'BRIDGE_QUEUE_NAME',
    reader: 'bridge',
    deploymentDefault: {
      value: 'nodeclaim-events',
      why: "the templates' EVENTS_QUEUE_NAME; the bridge has no default",
    },
    description: "the Function App's EVENTS_QUEUE_NAME (the bridgeQueueName output)",
    bicep: BRIDGE_NOT_IN_AZURE,
    terraform: BRIDGE_NOT_IN_AZURE,
    azd: derived('the bridgeQueueName output'),
    chart: { value: 'settings.queueName' },
  },
  {
    name: 'BRIDGE_STORAGE_CONNECTION_STRING',
    reader: 'bridge',
    description: 'a storage connection string instead of the service URL (Azurite)',
    bicep: BRIDGE_NOT_IN_AZURE,
    terraform: BRIDGE_NOT_IN_AZURE,
    chart: { absent: 'it holds a key; the chart authenticates with workload identity' },
  },
  {
    name: 'KUBECONFIG',
    reader: 'bridge',
    description: "a kubeconfig; the pod's ServiceAccount when unset",
    bicep: BRIDGE_NOT_IN_AZURE,
    terraform: BRIDGE_NOT_IN_AZURE,
    chart: { absent: 'in the cluster the bridge uses its ServiceAccount' },
  },
  {
    name: 'KUBERNETES_SERVICE_HOST',
    reader: 'bridge',
    description: 'set by Kubernetes in every pod: without KUBECONFIG the bridge requires it',
    bicep: BRIDGE_NOT_IN_AZURE,
    terraform: BRIDGE_NOT_IN_AZURE,
    chart: { absent: 'Kubernetes sets it in every pod' },
  },
  {
    name: 'BRIDGE_HEALTH_PORT',
    reader: 'bridge',
    default: '8080',
    description: 'port of /healthz and /readyz',
    bicep: BRIDGE_NOT_IN_AZURE,
    terraform: BRIDGE_NOT_IN_AZURE,
    azd: input('BRIDGE_HEALTH_PORT'),
    chart: { value: 'controller.healthProbe.port' },
  },
  {
    name: 'BRIDGE_RESYNC_SECONDS',
    reader: 'bridge',
    default: '300',
    description: 'full re-announce of every object that still needs work: the safety net for a lost message',
    bicep: BRIDGE_NOT_IN_AZURE,
    terraform: BRIDGE_NOT_IN_AZURE,
    azd: input('BRIDGE_RESYNC_SECONDS'),
    chart: { value: 'settings.resyncSeconds' },
  },
  {
    name: 'BRIDGE_POD_RESYNC_SECONDS',
    reader: 'bridge',
    default: '10',
    description:
      "one provisionable pod is re-announced this often while any is pending (Karpenter's requeue)",
    bicep: BRIDGE_NOT_IN_AZURE,
    terraform: BRIDGE_NOT_IN_AZURE,
    azd: input('BRIDGE_POD_RESYNC_SECONDS'),
    chart: { value: 'settings.podResyncSeconds' },
  },
  {
    name: 'BRIDGE_SOURCE',
    reader: 'bridge',
    description: 'the CloudEvent source of every message; /clusters/<CLUSTER_NAME>/event-bridge when unset',
    bicep: BRIDGE_NOT_IN_AZURE,
    terraform: BRIDGE_NOT_IN_AZURE,
    azd: input('BRIDGE_SOURCE'),
    chart: { value: 'settings.source' },
  },
  {
    name: 'BRIDGE_BUFFER_CAPACITY',
    reader: 'bridge',
    default: '10000',
    description: 'high-water mark of the outbox; above it the bridge stops reading watches until it drains',
    bicep: BRIDGE_NOT_IN_AZURE,
    terraform: BRIDGE_NOT_IN_AZURE,
    azd: input('BRIDGE_BUFFER_CAPACITY'),
    chart: { value: 'settings.bufferCapacity' },
  },
  {
    name: 'BRIDGE_SEND_CONCURRENCY',
    reader: 'bridge',
    default: '8',
    description: 'queue sends in flight at once',
    bicep: BRIDGE_NOT_IN_AZURE,
    terraform: BRIDGE_NOT_IN_AZURE,
    azd: input('BRIDGE_SEND_CONCURRENCY'),
    chart: { value: 'settings.sendConcurrency' },
  },
  {
    name: 'BRIDGE_SHUTDOWN_FLUSH_SECONDS',
    reader: 'bridge',
    default: '20',
    description: 'how long shutdown waits for the outbox to drain (below terminationGracePeriodSeconds)',
    bicep: BRIDGE_NOT_IN_AZURE,
    terraform: BRIDGE_NOT_IN_AZURE,
    azd: input('BRIDGE_SHUTDOWN_FLUSH_SECONDS'),
    chart: { value: 'settings.shutdownFlushSeconds' },
  },
  {
    name: 'BRIDGE_LOG_LEVEL',
    reader: 'bridge',
    default: 'info',
    description: 'debug, info, warn or error',
    bicep: BRIDGE_NOT_IN_AZURE,
    terraform: BRIDGE_NOT_IN_AZURE,
    azd: input('BRIDGE_LOG_LEVEL'),
    chart: { value: 'logLevel' },
  },
];

/** A deployment input that is not an app setting: it shapes the Azure resources themselves. */
export interface InfrastructureInput {
  bicep?: string;
  terraform?: string;
  description: string;
}

/** Every other input of infra/bicep/main.bicep and infra/terraform: none of them is an app setting. */
export const INFRASTRUCTURE_INPUTS: readonly InfrastructureInput[] = [
  { terraform: 'subscription_id', description: 'the subscription deployed to (azurerm 4.x needs one)' },
  { bicep: 'namePrefix', terraform: 'name_prefix', description: 'prefix of every resource name' },
  {
    bicep: 'appResourceGroupName',
    terraform: 'app_resource_group_name',
    description: "the resource group created for the app's resources",
  },
  {
    bicep: 'aksClusterResourceGroupName',
    terraform: 'aks_cluster_resource_group_name',
    description: "the AKS cluster's resource group",
  },
  { bicep: 'aksClusterName', terraform: 'aks_cluster_name', description: 'the AKS cluster resource' },
  {
    bicep: 'nodeSecurityGroupName',
    terraform: 'node_security_group_name',
    description: 'the node NSG by name, in the node resource group (NODE_SECURITY_GROUP_ID)',
  },
  {
    bicep: 'kubernetesAuthorization',
    terraform: 'kubernetes_authorization',
    description: "how the app identity's Kubernetes permissions are granted: KubernetesRBAC or AzureRBAC",
  },
  {
    bicep: 'functionSubnetId',
    terraform: 'function_subnet_id',
    description: "subnet of the Function App's VNet integration",
  },
  {
    bicep: 'maximumInstanceCount',
    terraform: 'maximum_instance_count',
    description: 'upper bound on Function App instances',
  },
  {
    terraform: 'instance_memory_in_mb',
    description: 'Function App instance memory (Bicep: the module default, 2048)',
  },
  {
    bicep: 'alwaysReadyQueueInstances',
    terraform: 'always_ready_queue_instances',
    description: 'always-ready instances of the queue trigger (docs/cost.md)',
  },
  {
    bicep: 'alwaysReadyDurableInstances',
    terraform: 'always_ready_durable_instances',
    description: 'always-ready instances of the Durable Functions group',
  },
  {
    bicep: 'durableBackend',
    terraform: 'durable_backend',
    description:
      'the Durable Functions backend: AzureStorage (the default, in the app storage account) or DurableTaskScheduler (a scheduler and task hub deployed beside the app)',
  },
  {
    bicep: 'durableTaskSchedulerSku',
    terraform: 'durable_task_scheduler_sku',
    description:
      "the Durable Task Scheduler's SKU: Consumption (per action) or Dedicated (per capacity unit)",
  },
  {
    bicep: 'durableTaskSchedulerCapacity',
    terraform: 'durable_task_scheduler_capacity',
    description: 'capacity units of a Dedicated Durable Task Scheduler (1-3)',
  },
  {
    bicep: 'durableTaskSchedulerIpAllowlist',
    terraform: 'durable_task_scheduler_ip_allowlist',
    description: 'addresses allowed to reach the Durable Task Scheduler (an empty list refuses every caller)',
  },
  { bicep: 'alertEmail', terraform: 'alert_email', description: 'where the alert rules send e-mail' },
  {
    bicep: 'bridgeServiceAccountName',
    terraform: 'bridge_service_account_name',
    description: "the bridge's ServiceAccount, which its federated credential trusts",
  },
  { bicep: 'tags', terraform: 'tags', description: 'tags of every resource' },
  { bicep: 'environmentName', description: 'the azd environment, as a tag azd finds its resources by' },
];

/** The settings either program reads, by program. */
export function settingsReadBy(reader: SettingReader): SettingRow[] {
  return SETTING_TABLE.filter((row) => row.reader === reader);
}
