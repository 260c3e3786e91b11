// The azd entry point: deploys infra/bicep/main.bicep (the same template as a manual deployment) with the
// values azd keeps in its environment (.azure/<env>/.env), most of them read from the cluster by
// infra/hooks/preprovision.mjs. Its outputs are the template's, which azd stores for the hooks.
targetScope = 'subscription'

@description('azd environment name; also the resource name prefix (letters and digits of it, 3-11).')
param environmentName string

@description('Region of the app (the cluster\'s region).')
param location string

@description('Existing AKS cluster.')
param aksClusterName string

@description('Its resource group.')
param aksClusterResourceGroupName string

@description('Subnet node NICs join.')
param nodeSubnetId string

@description('The node NSG in the node resource group.')
param nodeSecurityGroupName string

@description('true on a VNet you brought.')
param attachNsgToNic bool

@description('OpenSSH public key for the node admin user.')
param nodeSshPublicKey string

@description('base64 cluster CA (certificate-authority-data).')
param kubeCaCert string

@description('Capacity Reservation Groups launches may use (CAPACITY_RESERVATION_GROUP_IDS, comma-separated); the app may read and deploy into these only. Empty for none.')
param capacityReservationGroupIds string = ''

@description('E-mail for alerts; empty for none.')
param alertEmail string = ''

@description('LINUX_ADMIN_USERNAME (main.bicep\'s nodeAdminUsername).')
param nodeAdminUsername string = 'azureuser'

@description('VNET_GUID (main.bicep\'s vnetGuid).')
param vnetGuid string = ''

@description('VM_MEMORY_OVERHEAD_PERCENT (main.bicep\'s vmMemoryOverheadPercent).')
param vmMemoryOverheadPercent string = '0.075'

@description('CLUSTER_ENDPOINT (main.bicep\'s kubeApiServerUrl).')
param kubeApiServerUrl string = ''

@description('KUBE_TOKEN_SCOPE (main.bicep\'s kubeTokenScope).')
param kubeTokenScope string = '6dae42f8-4368-4678-94ff-3960e28e3630/.default'

@description('BOOTSTRAP_API_SERVER_URL (main.bicep\'s bootstrapApiServerUrl).')
param bootstrapApiServerUrl string = ''

@description('BOOTSTRAP_CA_CERT (main.bicep\'s bootstrapCaCert).')
param bootstrapCaCert string = ''

@description('KUBERNETES_VERSION (main.bicep\'s kubernetesVersion).')
param kubernetesVersion string = ''

@description('NETWORK_PLUGIN_MODE (main.bicep\'s networkPluginMode).')
param networkPluginMode string = ''

@description('NETWORK_DATAPLANE (main.bicep\'s networkDataplane).')
param networkDataplane string = ''

@description('RETAIL_PRICES_ENDPOINT (main.bicep\'s retailPricesEndpoint).')
param retailPricesEndpoint string = 'https://prices.azure.com'

@description('EVENTS_QUEUE_NAME (main.bicep\'s eventsQueueName).')
param eventsQueueName string = 'nodeclaim-events'

@description('UNAVAILABLE_OFFERINGS_TABLE (main.bicep\'s unavailableOfferingsTableName).')
param unavailableOfferingsTableName string = 'unavailableofferings'

@description('DECISION_RECORDS_TABLE (main.bicep\'s decisionRecordsTableName).')
param decisionRecordsTableName string = 'decisionrecords'

@description('DECISION_RECORD_RETENTION_HOURS (main.bicep\'s decisionRecordRetentionHours).')
param decisionRecordRetentionHours int = 24

@description('DURABLE_TASK_HUB (main.bicep\'s durableTaskHubName).')
param durableTaskHubName string = 'nodeclaims'

@description('DURABLE_BACKEND (main.bicep\'s durableBackend): AzureStorage or DurableTaskScheduler.')
@allowed(['AzureStorage', 'DurableTaskScheduler'])
param durableBackend string = 'AzureStorage'

@description('DURABLE_TASK_SCHEDULER_SKU (main.bicep\'s durableTaskSchedulerSku): Consumption or Dedicated.')
@allowed(['Consumption', 'Dedicated'])
param durableTaskSchedulerSku string = 'Consumption'

@description('DURABLE_TASK_SCHEDULER_CAPACITY (main.bicep\'s durableTaskSchedulerCapacity): Dedicated capacity units, 1-3.')
param durableTaskSchedulerCapacity int = 1

@description('DURABLE_PARTITION_COUNT (main.bicep\'s durablePartitionCount): Azure Storage control-queue partitions, 1-16.')
param durablePartitionCount int = 4

@description('BUILD_COMMIT (main.bicep\'s buildCommit).')
param buildCommit string = ''

@description('LAUNCH_POLL_INTERVAL_SECONDS (main.bicep\'s launchPollIntervalSeconds).')
param launchPollIntervalSeconds int = 5

@description('LAUNCH_MAX_POLL_INTERVAL_SECONDS (main.bicep\'s launchMaxPollIntervalSeconds).')
param launchMaxPollIntervalSeconds int = 60

@description('LAUNCH_DEADLINE_MINUTES (main.bicep\'s launchDeadlineMinutes).')
param launchDeadlineMinutes int = 15

@description('SKU_CACHE_SECONDS (main.bicep\'s skuCacheSeconds).')
param skuCacheSeconds int = 3600

@description('NODE_IMAGE_CACHE_SECONDS (main.bicep\'s nodeImageCacheSeconds).')
param nodeImageCacheSeconds int = 3600

@description('EXPLAIN_AUDIENCE (main.bicep\'s explainAudience): the explain app registration; empty: explain off.')
param explainAudience string = ''

@description('SWEEP_SCHEDULE (main.bicep\'s sweepSchedule).')
param sweepSchedule string = '*/15 * * * * *'

@description('GC_SCHEDULE (main.bicep\'s gcSchedule).')
param gcSchedule string = '0 */5 * * * *'

@description('REGISTRATION_TIMEOUT_MINUTES (main.bicep\'s registrationTimeoutMinutes).')
param registrationTimeoutMinutes int = 15

@description('REPLACEMENT_POLL_SECONDS (main.bicep\'s replacementPollSeconds).')
param replacementPollSeconds int = 5

@description('REPLACEMENT_TIMEOUT_MINUTES (main.bicep\'s replacementTimeoutMinutes).')
param replacementTimeoutMinutes int = 30

@description('REPLACEMENT_FALLBACK_SECONDS (main.bicep\'s replacementFallbackSeconds).')
param replacementFallbackSeconds int = 180

@description('REPLACEMENT_BACKOFF_MINUTES (main.bicep\'s replacementBackoffMinutes).')
param replacementBackoffMinutes int = 5

@description('DRAIN_POLL_SECONDS (main.bicep\'s drainPollSeconds).')
param drainPollSeconds int = 5

@description('ORPHAN_VM_GRACE_MINUTES (main.bicep\'s orphanVmGraceMinutes).')
param orphanVmGraceMinutes int = 10

@description('CONSOLIDATION_VALIDATION_SECONDS (main.bicep\'s consolidationValidationSeconds).')
param consolidationValidationSeconds int = 15

@description('REQUEST_TIMEOUT_SECONDS (main.bicep\'s requestTimeoutSeconds).')
param requestTimeoutSeconds int = 30

@description('METRICS_PER_NODE (main.bicep\'s metricsPerNode).')
param metricsPerNode bool = false

@description('BATCH_IDLE_DURATION (main.bicep\'s batchIdleDuration).')
param batchIdleDuration string = '1s'

@description('BATCH_MAX_DURATION (main.bicep\'s batchMaxDuration).')
param batchMaxDuration string = '10s'

@description('PROVISIONING_SELECTOR (main.bicep\'s provisioningSelector).')
param provisioningSelector string = ''

@allowed(['Respect', 'Ignore'])
@description('PREFERENCE_POLICY (main.bicep\'s preferencePolicy).')
param preferencePolicy string = 'Respect'

@allowed(['Strict', 'BestEffort'])
@description('MIN_VALUES_POLICY (main.bicep\'s minValuesPolicy).')
param minValuesPolicy string = 'Strict'

@description('FEATURE_GATES (main.bicep\'s featureGates).')
param featureGates string = ''

@description('REPAIR_POLICIES (main.bicep\'s repairPolicies).')
param repairPolicies string = 'Ready=False:10m:reboot,Ready=Unknown:10m:reboot,kubernetes.azure.com/NodeHealthy=False:0s:reboot,PreemptionScheduled=True:0s:preempted'

@description('REPAIR_MAX_REBOOTS (main.bicep\'s repairMaxReboots).')
param repairMaxReboots int = 1

@description('REPAIR_REBOOT_RECOVERY_SECONDS (main.bicep\'s repairRebootRecoverySeconds).')
param repairRebootRecoverySeconds int = 300

@description('PREEMPTION_DRAIN_SECONDS (main.bicep\'s preemptionDrainSeconds).')
param preemptionDrainSeconds int = 15

@description('ROLLOUT_POLICY (main.bicep\'s rolloutPolicy).')
param rolloutPolicy string = 'Canary'

@description('ROLLOUT_CANARY (main.bicep\'s rolloutCanary).')
param rolloutCanary string = '1'

@description('ROLLOUT_POLL_SECONDS (main.bicep\'s rolloutPollSeconds).')
param rolloutPollSeconds int = 10

@description('ROLLOUT_SOAK_SECONDS (main.bicep\'s rolloutSoakSeconds).')
param rolloutSoakSeconds int = 300

@description('ROLLOUT_INITIALIZED_WITHIN_SECONDS (main.bicep\'s rolloutInitializedWithinSeconds).')
param rolloutInitializedWithinSeconds int = 600

@description('ROLLOUT_POD_READY_WITHIN_SECONDS (main.bicep\'s rolloutPodReadyWithinSeconds).')
param rolloutPodReadyWithinSeconds int = 300

@description('ROLLOUT_MAX_POD_RESTARTS (main.bicep\'s rolloutMaxPodRestarts).')
param rolloutMaxPodRestarts int = 3

resource cluster 'Microsoft.ContainerService/managedClusters@2024-09-01' existing = {
  scope: resourceGroup(aksClusterResourceGroupName)
  name: aksClusterName
}

var prefix = take(toLower(replace(replace(environmentName, '-', ''), '_', '')), 11)

module app '../bicep/main.bicep' = {
  name: 'nodeclaim-${prefix}'
  params: {
    environmentName: environmentName
    location: location
    namePrefix: length(prefix) < 3 ? '${prefix}ncl' : prefix
    clusterName: aksClusterName
    aksClusterName: aksClusterName
    aksClusterResourceGroupName: aksClusterResourceGroupName
    nodeResourceGroupName: cluster.properties.nodeResourceGroup
    nodeSubnetId: nodeSubnetId
    nodeSecurityGroupName: nodeSecurityGroupName
    attachNsgToNic: attachNsgToNic
    nodeSshPublicKey: nodeSshPublicKey
    kubeCaCert: kubeCaCert
    alertEmail: alertEmail
    capacityReservationGroupIds: filter(map(split(capacityReservationGroupIds, ','), id => trim(id)), id => !empty(id))
    nodeAdminUsername: nodeAdminUsername
    vnetGuid: vnetGuid
    vmMemoryOverheadPercent: vmMemoryOverheadPercent
    kubeApiServerUrl: kubeApiServerUrl
    kubeTokenScope: kubeTokenScope
    bootstrapApiServerUrl: bootstrapApiServerUrl
    bootstrapCaCert: bootstrapCaCert
    kubernetesVersion: kubernetesVersion
    networkPluginMode: networkPluginMode
    networkDataplane: networkDataplane
    retailPricesEndpoint: retailPricesEndpoint
    eventsQueueName: eventsQueueName
    unavailableOfferingsTableName: unavailableOfferingsTableName
    decisionRecordsTableName: decisionRecordsTableName
    decisionRecordRetentionHours: decisionRecordRetentionHours
    durableTaskHubName: durableTaskHubName
    durableBackend: durableBackend
    durableTaskSchedulerSku: durableTaskSchedulerSku
    durableTaskSchedulerCapacity: durableTaskSchedulerCapacity
    durablePartitionCount: durablePartitionCount
    buildCommit: buildCommit
    launchPollIntervalSeconds: launchPollIntervalSeconds
    launchMaxPollIntervalSeconds: launchMaxPollIntervalSeconds
    launchDeadlineMinutes: launchDeadlineMinutes
    skuCacheSeconds: skuCacheSeconds
    nodeImageCacheSeconds: nodeImageCacheSeconds
    explainAudience: explainAudience
    sweepSchedule: sweepSchedule
    gcSchedule: gcSchedule
    registrationTimeoutMinutes: registrationTimeoutMinutes
    replacementPollSeconds: replacementPollSeconds
    replacementFallbackSeconds: replacementFallbackSeconds
    replacementTimeoutMinutes: replacementTimeoutMinutes
    replacementBackoffMinutes: replacementBackoffMinutes
    drainPollSeconds: drainPollSeconds
    orphanVmGraceMinutes: orphanVmGraceMinutes
    consolidationValidationSeconds: consolidationValidationSeconds
    requestTimeoutSeconds: requestTimeoutSeconds
    metricsPerNode: metricsPerNode
    batchIdleDuration: batchIdleDuration
    batchMaxDuration: batchMaxDuration
    provisioningSelector: provisioningSelector
    preferencePolicy: preferencePolicy
    minValuesPolicy: minValuesPolicy
    featureGates: featureGates
    repairPolicies: repairPolicies
    repairMaxReboots: repairMaxReboots
    repairRebootRecoverySeconds: repairRebootRecoverySeconds
    preemptionDrainSeconds: preemptionDrainSeconds
    rolloutPolicy: rolloutPolicy
    rolloutCanary: rolloutCanary
    rolloutPollSeconds: rolloutPollSeconds
    rolloutSoakSeconds: rolloutSoakSeconds
    rolloutInitializedWithinSeconds: rolloutInitializedWithinSeconds
    rolloutPodReadyWithinSeconds: rolloutPodReadyWithinSeconds
    rolloutMaxPodRestarts: rolloutMaxPodRestarts
  }
}

// azd's own name for the resource group it deploys into. The app no longer reads AZURE_RESOURCE_GROUP
// (once an alias of AZURE_NODE_RESOURCE_GROUP): set alone it stops startup naming the setting to use.
output AZURE_RESOURCE_GROUP string = app.outputs.appResourceGroupName
output appResourceGroupName string = app.outputs.appResourceGroupName
output functionAppName string = app.outputs.functionAppName
output functionPrincipalId string = app.outputs.functionPrincipalId
output bridgeIdentityClientId string = app.outputs.bridgeIdentityClientId
output bridgeQueueServiceUrl string = app.outputs.bridgeQueueServiceUrl
output bridgeQueueName string = app.outputs.bridgeQueueName
output appInsightsName string = app.outputs.appInsightsName
output bridgeRegistryName string = app.outputs.bridgeRegistryName
output bridgeRegistryLoginServer string = app.outputs.bridgeRegistryLoginServer
output kubernetesAuthorization string = app.outputs.kubernetesAuthorization
output aksClusterName string = app.outputs.aksClusterName
output aksClusterResourceGroupName string = app.outputs.aksClusterResourceGroupName
output clusterName string = app.outputs.clusterName
