// The Function App on a Flex Consumption plan, Node.js 22, running as its user-assigned identity.
// App settings are exactly the ones shared/config/settings.ts reads (plus the host's own): storage is an
// identity-based connection (AzureWebJobsStorage__*), and telemetry goes to Application Insights with
// Entra authentication. No setting holds a secret. The Durable backend is host.json's Azure Storage
// unless durableBackend is DurableTaskScheduler, when AzureFunctionsJobHost__* settings override
// host.json's storageProvider (the host reads any host.json value from such a setting).

@description('Function App name (globally unique host name).')
param name string

@description('Azure region.')
param location string

@description('Resource ID of the Function App\'s user-assigned managed identity.')
param identityId string

@description('Client ID of that identity (DefaultAzureCredential and the storage connection use it).')
param identityClientId string

@description('Storage account used by the host, Durable Functions, the events queue and the offerings table.')
param storageAccountName string

@description('Blob container URL that holds the deployment package.')
param deploymentContainerUrl string

@description('Application Insights connection string (an ingestion endpoint and key ID; not a credential with local auth disabled).')
param appInsightsConnectionString string

@description('Upper bound on instances the plan scales out to.')
@minValue(1)
@maxValue(1000)
param maximumInstanceCount int = 40

@description('Always-ready instances for the event queue trigger (objectEvents): a pending pod after an idle spell is then launched without waiting for a cold start. 0 turns it off.')
@minValue(0)
@maxValue(20)
param alwaysReadyQueueInstances int = 1

@description('Always-ready instances for the Durable Functions group (orchestrations and activities: launch monitor, provisioning batcher, replacement, termination). 0 turns it off.')
@minValue(0)
@maxValue(20)
param alwaysReadyDurableInstances int = 1

@description('Instance memory in MB.')
@allowed([512, 2048, 4096])
param instanceMemoryMB int = 2048

@description('Subnet for regional VNet integration (delegated to Microsoft.App/environments); empty for none. Needed when the API server is private or restricted to authorized IP ranges.')
param virtualNetworkSubnetId string = ''

@description('CLUSTER_NAME: tags every VM, so orphans of this cluster can be found.')
param clusterName string

@description('AZURE_SUBSCRIPTION_ID: subscription of the node resource group.')
param nodeSubscriptionId string

@description('AZURE_NODE_RESOURCE_GROUP (the Azure provider\'s name): the resource group nodes are created in (the AKS node resource group).')
param nodeResourceGroupName string

@description('LOCATION (alias AZURE_LOCATION): region of the nodes.')
param nodeLocation string

@description('VNET_SUBNET_ID (alias AZURE_SUBNET_ID): subnet for node NICs when the AKSNodeClass names none.')
param nodeSubnetId string

@description('SSH_PUBLIC_KEY (alias NODE_SSH_PUBLIC_KEY): OpenSSH public key installed for the node admin user.')
param nodeSshPublicKey string

@description('LINUX_ADMIN_USERNAME (alias NODE_ADMIN_USERNAME): admin user of the node VMs.')
param nodeAdminUsername string = 'azureuser'

@description('ARM_ENDPOINT: Azure Resource Manager endpoint of this cloud.')
param armEndpoint string

@description('RETAIL_PRICES_ENDPOINT: Azure Retail Prices API that VM prices are refreshed from every 12 h (public, no credentials).')
param retailPricesEndpoint string = 'https://prices.azure.com'

@description('CLUSTER_ENDPOINT (alias KUBE_API_SERVER_URL): API server the functions call with an Entra token.')
param kubeApiServerUrl string

@description('KUBE_CA_CERT: base64 of the cluster CA certificate (PEM).')
param kubeCaCert string

@description('KUBE_TOKEN_SCOPE: Entra scope of the AKS API server (the AKS AAD server application).')
param kubeTokenScope string = '6dae42f8-4368-4678-94ff-3960e28e3630/.default'

@description('BOOTSTRAP_API_SERVER_URL: API server address written into node bootstrap data.')
param bootstrapApiServerUrl string

@description('BOOTSTRAP_CA_CERT: base64 of the CA certificate (PEM) nodes trust for that API server.')
param bootstrapCaCert string

@description('EVENTS_QUEUE_NAME: queue the event bridge sends to.')
param eventsQueueName string

@description('UNAVAILABLE_OFFERINGS_TABLE: table of recently failed offerings.')
param unavailableOfferingsTableName string

@description('DECISION_RECORDS_TABLE: table of what provisioning and disruption decided, for explain.')
param decisionRecordsTableName string

@description('DECISION_RECORD_RETENTION_HOURS: how long a decision record is kept for explain.')
param decisionRecordRetentionHours int

@description('DURABLE_TASK_HUB: Durable Functions task hub name (host.json reads %DURABLE_TASK_HUB%).')
param durableTaskHubName string

@description('AzureStorage: host.json\'s Azure Storage backend. DurableTaskScheduler: the scheduler at durableTaskSchedulerEndpoint.')
@allowed(['AzureStorage', 'DurableTaskScheduler'])
param durableBackend string = 'AzureStorage'

@description('The Durable Task Scheduler\'s endpoint (https://<name>.<region>.durabletask.io); empty with AzureStorage.')
param durableTaskSchedulerEndpoint string = ''

@description('Control-queue partitions of the Azure Storage task hub (1-16).')
@minValue(1)
@maxValue(16)
param durablePartitionCount int = 4

@description('SWEEP_SCHEDULE: NCRONTAB (with seconds) of the lifecycle sweep.')
param sweepSchedule string = '*/15 * * * * *'

@description('REGISTRATION_TIMEOUT_MINUTES: a launched NodeClaim whose Node has not registered by then is deleted.')
param registrationTimeoutMinutes int = 15

@description('Node configuration read from the AKS cluster (the settings output of aks-cluster-inputs.bicep).')
param clusterInputs object

@description('CAPACITY_RESERVATION_GROUP_IDS: Capacity Reservation Groups launches may use; empty for none.')
param capacityReservationGroupIds array = []

@description('SYSTEM_NAMESPACE: the namespace the chart is installed in (the sweep\'s Lease).')
param systemNamespace string

@description('VNET_GUID: resourceGuid of the node VNet; Azure CNI Overlay nodes carry it as a label. Empty for none.')
param vnetGuid string

@description('VM_MEMORY_OVERHEAD_PERCENT: the share of a size\'s memory the guest does not see, as a fraction (0.075 is 7.5%), taken off every instance type\'s memory before scheduling.')
param vmMemoryOverheadPercent string

@description('BUILD_COMMIT: commit label of karpenter_build_info; empty for none.')
param buildCommit string

@description('LAUNCH_POLL_INTERVAL_SECONDS: shortest wait between polls of a VM creation.')
param launchPollIntervalSeconds int

@description('LAUNCH_MAX_POLL_INTERVAL_SECONDS: longest wait between those polls, with many launches in flight.')
param launchMaxPollIntervalSeconds int

@description('LAUNCH_DEADLINE_MINUTES: a VM creation not finished by then is abandoned.')
param launchDeadlineMinutes int

@description('SKU_CACHE_SECONDS: how long the region\'s VM size list is kept.')
param skuCacheSeconds int

@description('NODE_IMAGE_CACHE_SECONDS: how long a node image definition\'s published versions are kept.')
param nodeImageCacheSeconds int

@description('EXPLAIN_AUDIENCE: the app registration users get explain tokens for (client ID and/or Application ID URI, comma-separated); empty: explain answers 503.')
param explainAudience string = ''

@description('GC_SCHEDULE: NCRONTAB (with seconds) of orphan VM collection.')
param gcSchedule string

@description('REPLACEMENT_POLL_SECONDS: how often a replacement looks at its new NodeClaim.')
param replacementPollSeconds int

@description('REPLACEMENT_TIMEOUT_MINUTES: a replacement not Initialized by then is abandoned and the old node put back in service.')
param replacementTimeoutMinutes int

@description('REPLACEMENT_FALLBACK_SECONDS: how long a disruption waits for a wake from its replacements before it looks at them itself.')
param replacementFallbackSeconds int

@description('REPLACEMENT_BACKOFF_MINUTES: a node whose replacement failed is not tried again before this.')
param replacementBackoffMinutes int

@description('DRAIN_POLL_SECONDS: how often termination retries evictions a PodDisruptionBudget refused.')
param drainPollSeconds int

@description('ORPHAN_VM_GRACE_MINUTES: a tagged VM without a NodeClaim is deleted only once it is this old.')
param orphanVmGraceMinutes int

@description('CONSOLIDATION_VALIDATION_SECONDS: a consolidation decision is checked again this long after it was made, before it acts.')
param consolidationValidationSeconds int

@description('REQUEST_TIMEOUT_SECONDS: how long one ARM or Kubernetes API request may take before it is abandoned and retried.')
param requestTimeoutSeconds int

@description('METRICS_PER_NODE: export the per-node gauges (karpenter_nodes_allocatable, operator_nodeclaim_status_condition_count), a series per node or NodeClaim each export; off by default for the telemetry bill.')
param metricsPerNode bool

@description('BATCH_IDLE_DURATION: a provisioning window closes this long after the last new pending pod (a Go duration).')
param batchIdleDuration string

@description('BATCH_MAX_DURATION: and at the latest this long after it opened (a Go duration).')
param batchMaxDuration string

@description('PROVISIONING_SELECTOR: label selector the pods and the NodePools\' template labels must match, for several systems sharing one cluster; empty provisions for every pod.')
param provisioningSelector string

@allowed(['Respect', 'Ignore'])
@description('PREFERENCE_POLICY: Karpenter\'s: Respect tries preferred affinities and ScheduleAnyway spreads, relaxing them only when they cannot be met; Ignore leaves them out from the start.')
param preferencePolicy string

@allowed(['Strict', 'BestEffort'])
@description('MIN_VALUES_POLICY: Karpenter\'s: Strict creates no NodeClaim whose instance types fall below a requirement\'s minValues; BestEffort creates it with those minValues lowered, annotated karpenter.sh/nodeclaim-min-values-relaxed.')
param minValuesPolicy string

@description('FEATURE_GATES: Karpenter\'s Gate=true|false list (SpotToSpotConsolidation, NodeOverlay, CapacityBuffer, NodeRepair, ReservedCapacity); empty keeps upstream\'s defaults.')
param featureGates string

@description('REPAIR_POLICIES: node repair policies, Type=Status[/Reason]:toleration[:action] (read with FEATURE_GATES NodeRepair=true).')
param repairPolicies string

@description('REPAIR_MAX_REBOOTS: reboots tried before a node whose policy allows one is replaced (0: replace at once).')
param repairMaxReboots int

@description('REPAIR_REBOOT_RECOVERY_SECONDS: how long a rebooted node has for its condition to clear before it is replaced.')
param repairRebootRecoverySeconds int

@description('PREEMPTION_DRAIN_SECONDS: a node with a spot eviction notice is drained at the latest this long after the notice.')
param preemptionDrainSeconds int

@description('ROLLOUT_POLICY: how a NodePool\'s drift rolls out: Canary (a canary, then waves at the Drifted budget with health gates) or Immediate (the budget alone).')
param rolloutPolicy string

@description('ROLLOUT_CANARY: the canary\'s size: a number of nodes, or a percentage of the NodePool\'s drifted nodes (10%).')
param rolloutCanary string

@description('ROLLOUT_POLL_SECONDS: how often a rollout looks at its NodePool.')
param rolloutPollSeconds int

@description('ROLLOUT_SOAK_SECONDS: how long the health gates watch a finished wave before the next one starts.')
param rolloutSoakSeconds int

@description('ROLLOUT_INITIALIZED_WITHIN_SECONDS: a replacement not Initialized this long after its creation fails a rollout gate.')
param rolloutInitializedWithinSeconds int

@description('ROLLOUT_POD_READY_WITHIN_SECONDS: a pod on a replacement not Ready this long after it was scheduled fails a rollout gate.')
param rolloutPodReadyWithinSeconds int

@description('ROLLOUT_MAX_POD_RESTARTS: restarts of one pod on a replacement that fail a rollout gate (with more restarts than on the old nodes).')
param rolloutMaxPodRestarts int

@description('Tags for every resource.')
param tags object = {}

// One entry per group that has always-ready instances (an entry with 0 instances is not allowed).
var alwaysReadyQueue = [for i in range(0, min(alwaysReadyQueueInstances, 1)): {
  name: 'function:objectEvents'
  instanceCount: alwaysReadyQueueInstances
}]
var alwaysReadyDurable = [for i in range(0, min(alwaysReadyDurableInstances, 1)): {
  name: 'durable'
  instanceCount: alwaysReadyDurableInstances
}]

resource plan 'Microsoft.Web/serverfarms@2024-04-01' = {
  name: '${name}-plan'
  location: location
  tags: tags
  kind: 'functionapp'
  sku: {
    tier: 'FlexConsumption'
    name: 'FC1'
  }
  properties: {
    reserved: true
  }
}

resource site 'Microsoft.Web/sites@2024-04-01' = {
  name: name
  location: location
  tags: tags
  kind: 'functionapp,linux'
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: {
      '${identityId}': {}
    }
  }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    virtualNetworkSubnetId: empty(virtualNetworkSubnetId) ? null : virtualNetworkSubnetId
    siteConfig: {
      minTlsVersion: '1.2'
      ftpsState: 'Disabled'
    }
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: deploymentContainerUrl
          authentication: {
            type: 'UserAssignedIdentity'
            userAssignedIdentityResourceId: identityId
          }
        }
      }
      scaleAndConcurrency: {
        maximumInstanceCount: maximumInstanceCount
        instanceMemoryMB: instanceMemoryMB
        // Flex scales the queue trigger on its own ("function:<name>") and every durable function as one
        // group; an always-ready instance of each takes the first event without a cold start. The timer
        // triggers get none: a sweep that starts a few seconds late is no worse (docs/cost.md).
        alwaysReady: concat(alwaysReadyQueue, alwaysReadyDurable)
      }
      // Flex Consumption takes the runtime here; FUNCTIONS_WORKER_RUNTIME is not an allowed app setting.
      runtime: {
        name: 'node'
        version: '22'
      }
    }
  }
}

// Every name below is read by shared/config/settings.ts, host.json or the Functions host itself;
// test/unit/infra-settings.test.ts checks that against loadSettings and the Terraform version.
var appSettings = {
  AzureWebJobsStorage__accountName: storageAccountName
  AzureWebJobsStorage__credential: 'managedidentity'
  AzureWebJobsStorage__clientId: identityClientId
  AZURE_CLIENT_ID: identityClientId
  APPLICATIONINSIGHTS_CONNECTION_STRING: appInsightsConnectionString
  APPLICATIONINSIGHTS_AUTHENTICATION_STRING: 'ClientId=${identityClientId};Authorization=AAD'
  DURABLE_TASK_HUB: durableTaskHubName
  // extensions.durableTask.storageProvider.partitionCount of host.json, as a deployment input.
  AzureFunctionsJobHost__extensions__durableTask__storageProvider__partitionCount: string(durablePartitionCount)
  CLUSTER_NAME: clusterName
  AZURE_SUBSCRIPTION_ID: nodeSubscriptionId
  AZURE_NODE_RESOURCE_GROUP: nodeResourceGroupName
  LOCATION: nodeLocation
  VNET_SUBNET_ID: nodeSubnetId
  ARM_ENDPOINT: armEndpoint
  RETAIL_PRICES_ENDPOINT: retailPricesEndpoint
  LINUX_ADMIN_USERNAME: nodeAdminUsername
  SSH_PUBLIC_KEY: nodeSshPublicKey
  CLUSTER_ENDPOINT: kubeApiServerUrl
  KUBE_CA_CERT: kubeCaCert
  KUBE_TOKEN_SCOPE: kubeTokenScope
  BOOTSTRAP_API_SERVER_URL: bootstrapApiServerUrl
  BOOTSTRAP_CA_CERT: bootstrapCaCert
  EVENTS_QUEUE_NAME: eventsQueueName
  UNAVAILABLE_OFFERINGS_TABLE: unavailableOfferingsTableName
  DECISION_RECORDS_TABLE: decisionRecordsTableName
  DECISION_RECORD_RETENTION_HOURS: string(decisionRecordRetentionHours)
  SWEEP_SCHEDULE: sweepSchedule
  REGISTRATION_TIMEOUT_MINUTES: string(registrationTimeoutMinutes)
  KUBERNETES_VERSION: clusterInputs.kubernetesVersion
  AKS_TENANT_ID: clusterInputs.tenantId
  NETWORK_PLUGIN: clusterInputs.networkPlugin
  NETWORK_PLUGIN_MODE: clusterInputs.networkPluginMode
  NETWORK_DATAPLANE: clusterInputs.networkDataplane
  DNS_SERVICE_IP: clusterInputs.dnsServiceIp
  NODE_SECURITY_GROUP_ID: clusterInputs.nodeSecurityGroupId
  ATTACH_NSG_TO_NIC: clusterInputs.attachNsgToNic
  KUBELET_IDENTITY_RESOURCE_ID: clusterInputs.kubeletIdentityResourceId
  KUBELET_IDENTITY_CLIENT_ID: clusterInputs.kubeletIdentityClientId
  LOAD_BALANCER_BACKEND_POOL_IDS: clusterInputs.loadBalancerBackendPoolIds
  CAPACITY_RESERVATION_GROUP_IDS: join(capacityReservationGroupIds, ',')
  SYSTEM_NAMESPACE: systemNamespace
  VNET_GUID: vnetGuid
  VM_MEMORY_OVERHEAD_PERCENT: vmMemoryOverheadPercent
  BUILD_COMMIT: buildCommit
  LAUNCH_POLL_INTERVAL_SECONDS: string(launchPollIntervalSeconds)
  LAUNCH_MAX_POLL_INTERVAL_SECONDS: string(launchMaxPollIntervalSeconds)
  LAUNCH_DEADLINE_MINUTES: string(launchDeadlineMinutes)
  SKU_CACHE_SECONDS: string(skuCacheSeconds)
  NODE_IMAGE_CACHE_SECONDS: string(nodeImageCacheSeconds)
  EXPLAIN_AUDIENCE: explainAudience
  GC_SCHEDULE: gcSchedule
  REPLACEMENT_POLL_SECONDS: string(replacementPollSeconds)
  REPLACEMENT_FALLBACK_SECONDS: string(replacementFallbackSeconds)
  REPLACEMENT_TIMEOUT_MINUTES: string(replacementTimeoutMinutes)
  REPLACEMENT_BACKOFF_MINUTES: string(replacementBackoffMinutes)
  DRAIN_POLL_SECONDS: string(drainPollSeconds)
  ORPHAN_VM_GRACE_MINUTES: string(orphanVmGraceMinutes)
  CONSOLIDATION_VALIDATION_SECONDS: string(consolidationValidationSeconds)
  REQUEST_TIMEOUT_SECONDS: string(requestTimeoutSeconds)
  METRICS_PER_NODE: string(metricsPerNode)
  BATCH_IDLE_DURATION: batchIdleDuration
  BATCH_MAX_DURATION: batchMaxDuration
  PROVISIONING_SELECTOR: provisioningSelector
  PREFERENCE_POLICY: preferencePolicy
  MIN_VALUES_POLICY: minValuesPolicy
  FEATURE_GATES: featureGates
  REPAIR_POLICIES: repairPolicies
  REPAIR_MAX_REBOOTS: string(repairMaxReboots)
  REPAIR_REBOOT_RECOVERY_SECONDS: string(repairRebootRecoverySeconds)
  PREEMPTION_DRAIN_SECONDS: string(preemptionDrainSeconds)
  ROLLOUT_POLICY: rolloutPolicy
  ROLLOUT_CANARY: rolloutCanary
  ROLLOUT_POLL_SECONDS: string(rolloutPollSeconds)
  ROLLOUT_SOAK_SECONDS: string(rolloutSoakSeconds)
  ROLLOUT_INITIALIZED_WITHIN_SECONDS: string(rolloutInitializedWithinSeconds)
  ROLLOUT_POD_READY_WITHIN_SECONDS: string(rolloutPodReadyWithinSeconds)
  ROLLOUT_MAX_POD_RESTARTS: string(rolloutMaxPodRestarts)
}

// With durableBackend=DurableTaskScheduler only: the provider type and the setting holding its connection
// (https://learn.microsoft.com/azure/azure-functions/durable/durable-task-scheduler/durable-task-scheduler-identity:
// Endpoint, Authentication=ManagedIdentity and the user-assigned identity's ClientID; no key exists).
// host.json's hubName (%DURABLE_TASK_HUB%) names the task hub for both backends.
var durableTaskSchedulerSettings = {
  AzureFunctionsJobHost__extensions__durableTask__storageProvider__type: 'azureManaged'
  AzureFunctionsJobHost__extensions__durableTask__storageProvider__connectionStringName: 'DURABLE_TASK_SCHEDULER_CONNECTION_STRING'
  DURABLE_TASK_SCHEDULER_CONNECTION_STRING: 'Endpoint=${durableTaskSchedulerEndpoint};Authentication=ManagedIdentity;ClientID=${identityClientId}'
}

resource settings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: site
  name: 'appsettings'
  properties: union(appSettings, durableBackend == 'DurableTaskScheduler' ? durableTaskSchedulerSettings : {})
}

output id string = site.id
output name string = site.name
output defaultHostName string = site.properties.defaultHostName
