// Deploys the NodeClaim Function App next to an existing AKS cluster:
//   modules/function-identity.bicep  the app's user-assigned managed identity
//   modules/bridge-identity.bicep    the event bridge's identity + federated credential (Workload ID)
//   modules/storage.bicep            storage account (shared keys off), events queue, offerings table
//   modules/monitoring.bicep         Log Analytics, Application Insights, workbook, alert rules
//   modules/durable-task-scheduler.bicep  with durableBackend=DurableTaskScheduler only: the scheduler,
//                                    its task hub and the app identity's data role on that task hub
//   modules/function-app.bicep       Flex Consumption plan + Function App (Node.js 22) + app settings
//   modules/rbac.bicep               every role of both identities, at the narrowest scope
// Deploy with: az deployment sub create -l <region> -f infra/bicep/main.bicep -p infra/bicep/main.bicepparam
targetScope = 'subscription'

@description('Region of the app\'s resources (use the cluster\'s region).')
param location string

@description('Short lower-case prefix of every resource name (3-11 letters and digits).')
@minLength(3)
@maxLength(11)
param namePrefix string

@description('Resource group created for the app\'s resources.')
param appResourceGroupName string = '${namePrefix}-nodeclaims'

@description('CLUSTER_NAME: the cluster\'s name as written into VM tags (usually the AKS resource name).')
param clusterName string

@description('Resource group of the existing AKS cluster resource.')
param aksClusterResourceGroupName string

@description('Name of the existing AKS cluster resource (needs the OIDC issuer and Workload ID enabled).')
param aksClusterName string

@description('AZURE_NODE_RESOURCE_GROUP: resource group the node VMs are created in (usually the cluster\'s MC_ group).')
param nodeResourceGroupName string

@description('VNET_SUBNET_ID: subnet for node NICs when an AKSNodeClass names none.')
param nodeSubnetId string

@description('Node NSG in the node resource group, aks-agentpool-<cluster id>-nsg: NODE_SECURITY_GROUP_ID.')
param nodeSecurityGroupName string

@description('ATTACH_NSG_TO_NIC: true when the cluster runs on a VNet you brought.')
param attachNsgToNic bool = false

@description('KUBERNETES_VERSION override (major.minor.patch); empty reads the cluster\'s current version.')
param kubernetesVersion string = ''

@description('NETWORK_PLUGIN_MODE override: overlay, or none for pod IPs from the node subnet; empty reads the cluster\'s networkProfile.networkPluginMode.')
@allowed(['', 'overlay', 'none'])
param networkPluginMode string = ''

@description('NETWORK_DATAPLANE override: cilium or azure; empty reads the cluster\'s networkProfile.networkDataplane.')
@allowed(['', 'cilium', 'azure'])
param networkDataplane string = ''

@description('SSH_PUBLIC_KEY: OpenSSH public key for the node admin user.')
param nodeSshPublicKey string

@description('LINUX_ADMIN_USERNAME: admin user of the node VMs.')
param nodeAdminUsername string = 'azureuser'

@description('CLUSTER_ENDPOINT: API server URL the functions call and nodes join through; empty uses https://<cluster FQDN>:443 (set the private FQDN URL for a private cluster).')
param kubeApiServerUrl string = ''

@description('KUBE_CA_CERT: base64 of the cluster CA certificate, as in the kubeconfig\'s certificate-authority-data.')
param kubeCaCert string

@description('BOOTSTRAP_API_SERVER_URL: API server URL written into node bootstrap data; empty uses the CLUSTER_ENDPOINT value.')
param bootstrapApiServerUrl string = ''

@description('BOOTSTRAP_CA_CERT: base64 of the CA nodes trust; empty uses KUBE_CA_CERT.')
param bootstrapCaCert string = ''

@description('AzureRBAC: the app identity gets custom roles holding, as AKS data actions, what the roles in infra/k8s/functions grant (modules/rbac/cluster-roles.bicep). KubernetesRBAC: bind it with those roles themselves (narrower: per-name Lease access, subresources apart; azd up applies them).')
@allowed(['AzureRBAC', 'KubernetesRBAC'])
param kubernetesAuthorization string = 'KubernetesRBAC'

@description('CAPACITY_RESERVATION_GROUP_IDS: Capacity Reservation Groups launches may use (ARM IDs in this subscription); the app may read and deploy into these only. Empty for none.')
param capacityReservationGroupIds array = []

@description('Subnet for the Function App\'s VNet integration (delegated to Microsoft.App/environments); empty for none.')
param functionSubnetId string = ''

@description('EVENTS_QUEUE_NAME: queue between the event bridge and the functions.')
param eventsQueueName string = 'nodeclaim-events'

@description('UNAVAILABLE_OFFERINGS_TABLE: table of recently failed offerings.')
param unavailableOfferingsTableName string = 'unavailableofferings'

@description('DECISION_RECORDS_TABLE: table of what provisioning and disruption decided, for explain.')
param decisionRecordsTableName string = 'decisionrecords'

@description('DECISION_RECORD_RETENTION_HOURS: how long a decision record is kept for explain.')
param decisionRecordRetentionHours int = 24

@description('DURABLE_TASK_HUB: Durable Functions task hub name (letters and digits).')
param durableTaskHubName string = 'nodeclaims'

@description('The Durable Functions backend. AzureStorage: the task hub in the app\'s storage account (host.json\'s storageProvider). DurableTaskScheduler: a Durable Task Scheduler and task hub deployed beside the app, selected by app settings that override host.json (docs/cost.md, "The Durable backend", for the sizing).')
@allowed(['AzureStorage', 'DurableTaskScheduler'])
param durableBackend string = 'AzureStorage'

@description('With durableBackend=DurableTaskScheduler: Consumption (per action, up to 500 actions/s) or Dedicated (per capacity unit, 2,000 actions/s each).')
@allowed(['Consumption', 'Dedicated'])
param durableTaskSchedulerSku string = 'Consumption'

@description('With durableTaskSchedulerSku=Dedicated: capacity units (1-3; 3 for high availability).')
@minValue(1)
@maxValue(3)
param durableTaskSchedulerCapacity int = 1

@description('With durableBackend=DurableTaskScheduler: addresses allowed to reach the scheduler (IPv4, IPv6 or CIDR; an empty list refuses every caller). Every call is authenticated with the app identity whatever this allows.')
param durableTaskSchedulerIpAllowlist array = ['0.0.0.0/0']

@description('With durableBackend=AzureStorage: control-queue partitions of the task hub (1-16), the most instances that run orchestrations at once. Fixed once the task hub exists: a new value needs a new task hub (DURABLE_TASK_HUB).')
@minValue(1)
@maxValue(16)
param durablePartitionCount int = 4

@description('Upper bound on Function App instances.')
param maximumInstanceCount int = 40

@description('Always-ready instances of the event queue trigger (no cold start for the first pending pod after an idle spell; docs/cost.md). 0 turns it off.')
param alwaysReadyQueueInstances int = 1

@description('Always-ready instances of the Durable Functions group (launch monitor, provisioning batcher, replacement, termination). 0 turns it off.')
param alwaysReadyDurableInstances int = 1

@description('SWEEP_SCHEDULE: NCRONTAB (with seconds) of the lifecycle sweep.')
param sweepSchedule string = '*/15 * * * * *'

@description('REGISTRATION_TIMEOUT_MINUTES: launched NodeClaims whose Node has not registered by then are deleted.')
param registrationTimeoutMinutes int = 15

@description('VNET_GUID: resourceGuid of the node VNet; Azure CNI Overlay nodes carry it as a label. Empty for none.')
param vnetGuid string = ''

@description('VM_MEMORY_OVERHEAD_PERCENT: the share of a size\'s memory the guest does not see, as a fraction (0.075 is 7.5%), taken off every instance type\'s memory before scheduling.')
param vmMemoryOverheadPercent string = '0.075'

@description('KUBE_TOKEN_SCOPE: Entra scope of the API server\'s token (the AKS AAD server application).')
param kubeTokenScope string = '6dae42f8-4368-4678-94ff-3960e28e3630/.default'

@description('RETAIL_PRICES_ENDPOINT: Azure Retail Prices API that VM prices are refreshed from every 12 h (public, no credentials).')
param retailPricesEndpoint string = 'https://prices.azure.com'

@description('BUILD_COMMIT: commit label of karpenter_build_info; empty for none.')
param buildCommit string = ''

@description('LAUNCH_POLL_INTERVAL_SECONDS: shortest wait between polls of a VM creation.')
param launchPollIntervalSeconds int = 5

@description('LAUNCH_MAX_POLL_INTERVAL_SECONDS: longest wait between those polls, with many launches in flight.')
param launchMaxPollIntervalSeconds int = 60

@description('LAUNCH_DEADLINE_MINUTES: a VM creation not finished by then is abandoned.')
param launchDeadlineMinutes int = 15

@description('SKU_CACHE_SECONDS: how long the region\'s VM size list is kept.')
param skuCacheSeconds int = 3600

@description('NODE_IMAGE_CACHE_SECONDS: how long a node image definition\'s published versions are kept.')
param nodeImageCacheSeconds int = 3600

@description('EXPLAIN_AUDIENCE: the app registration users get explain tokens for (client ID and/or Application ID URI, comma-separated); empty: explain answers 503 (docs/explain.md).')
param explainAudience string = ''

@description('GC_SCHEDULE: NCRONTAB (with seconds) of orphan VM collection.')
param gcSchedule string = '0 */5 * * * *'

@description('REPLACEMENT_POLL_SECONDS: how often a replacement looks at its new NodeClaim.')
param replacementPollSeconds int = 5

@description('REPLACEMENT_TIMEOUT_MINUTES: a replacement not Initialized by then is abandoned and the old node put back in service.')
param replacementTimeoutMinutes int = 30

@description('REPLACEMENT_FALLBACK_SECONDS: how long a disruption waits for a wake from its replacements before it looks at them itself.')
param replacementFallbackSeconds int = 180

@description('REPLACEMENT_BACKOFF_MINUTES: a node whose replacement failed is not tried again before this.')
param replacementBackoffMinutes int = 5

@description('DRAIN_POLL_SECONDS: how often termination retries evictions a PodDisruptionBudget refused.')
param drainPollSeconds int = 5

@description('ORPHAN_VM_GRACE_MINUTES: a tagged VM without a NodeClaim is deleted only once it is this old.')
param orphanVmGraceMinutes int = 10

@description('CONSOLIDATION_VALIDATION_SECONDS: a consolidation decision is checked again this long after it was made, before it acts.')
param consolidationValidationSeconds int = 15

@description('REQUEST_TIMEOUT_SECONDS: how long one ARM or Kubernetes API request may take before it is abandoned and retried.')
param requestTimeoutSeconds int = 30

@description('METRICS_PER_NODE: export the per-node gauges (karpenter_nodes_allocatable, operator_nodeclaim_status_condition_count), a series per node or NodeClaim each export; off by default for the telemetry bill.')
param metricsPerNode bool = false

@description('BATCH_IDLE_DURATION: a provisioning window closes this long after the last new pending pod (a Go duration).')
param batchIdleDuration string = '1s'

@description('BATCH_MAX_DURATION: and at the latest this long after it opened (a Go duration).')
param batchMaxDuration string = '10s'

@description('PROVISIONING_SELECTOR: label selector the pods and the NodePools\' template labels must match, for several systems sharing one cluster; empty provisions for every pod.')
param provisioningSelector string = ''

@allowed(['Respect', 'Ignore'])
@description('PREFERENCE_POLICY: Karpenter\'s: Respect tries preferred affinities and ScheduleAnyway spreads, relaxing them only when they cannot be met; Ignore leaves them out from the start.')
param preferencePolicy string = 'Respect'

@allowed(['Strict', 'BestEffort'])
@description('MIN_VALUES_POLICY: Karpenter\'s: Strict creates no NodeClaim whose instance types fall below a requirement\'s minValues; BestEffort creates it with those minValues lowered, annotated karpenter.sh/nodeclaim-min-values-relaxed.')
param minValuesPolicy string = 'Strict'

@description('FEATURE_GATES: Karpenter\'s Gate=true|false list (SpotToSpotConsolidation, NodeOverlay, CapacityBuffer, NodeRepair, ReservedCapacity); empty keeps upstream\'s defaults.')
param featureGates string = ''

@description('REPAIR_POLICIES: node repair policies, Type=Status[/Reason]:toleration[:action] (read with FEATURE_GATES NodeRepair=true).')
param repairPolicies string = 'Ready=False:10m:reboot,Ready=Unknown:10m:reboot,kubernetes.azure.com/NodeHealthy=False:0s:reboot,PreemptionScheduled=True:0s:preempted'

@description('REPAIR_MAX_REBOOTS: reboots tried before a node whose policy allows one is replaced (0: replace at once).')
param repairMaxReboots int = 1

@description('REPAIR_REBOOT_RECOVERY_SECONDS: how long a rebooted node has for its condition to clear before it is replaced.')
param repairRebootRecoverySeconds int = 300

@description('PREEMPTION_DRAIN_SECONDS: a node with a spot eviction notice is drained at the latest this long after the notice.')
param preemptionDrainSeconds int = 15

@description('ROLLOUT_POLICY: how a NodePool\'s drift rolls out: Canary (a canary, then waves at the Drifted budget with health gates) or Immediate (the budget alone).')
param rolloutPolicy string = 'Canary'

@description('ROLLOUT_CANARY: the canary\'s size: a number of nodes, or a percentage of the NodePool\'s drifted nodes (10%).')
param rolloutCanary string = '1'

@description('ROLLOUT_POLL_SECONDS: how often a rollout looks at its NodePool.')
param rolloutPollSeconds int = 10

@description('ROLLOUT_SOAK_SECONDS: how long the health gates watch a finished wave before the next one starts.')
param rolloutSoakSeconds int = 300

@description('ROLLOUT_INITIALIZED_WITHIN_SECONDS: a replacement not Initialized this long after its creation fails a rollout gate.')
param rolloutInitializedWithinSeconds int = 600

@description('ROLLOUT_POD_READY_WITHIN_SECONDS: a pod on a replacement not Ready this long after it was scheduled fails a rollout gate.')
param rolloutPodReadyWithinSeconds int = 300

@description('ROLLOUT_MAX_POD_RESTARTS: restarts of one pod on a replacement that fail a rollout gate (with more restarts than on the old nodes).')
param rolloutMaxPodRestarts int = 3

@description('E-mail address for alerts; empty creates the alert rules without notifications.')
param alertEmail string = ''

@description('SYSTEM_NAMESPACE: the namespace the chart is installed in, where the bridge ServiceAccount (trusted by its federated credential) and the sweep\'s Lease live.')
param bridgeServiceAccountNamespace string = 'nodeclaim-system'

@description('Name of the event bridge ServiceAccount (infra/k8s/bridge/serviceaccount.yaml).')
param bridgeServiceAccountName string = 'event-bridge'

@description('Tags for every resource.')
param tags object = {}

@description('azd environment name (set by azd up); tags the resource group and the Function App so azd finds them. Empty outside azd.')
param environmentName string = ''

var suffix = uniqueString(subscription().id, namePrefix, location)
var allTags = union(tags, { 'nodeclaim-azure/cluster': clusterName }, empty(environmentName) ? {} : { 'azd-env-name': environmentName })
var storageAccountName = take('${namePrefix}${suffix}', 24)
var deploymentContainerName = 'app-package'
var durableTaskScheduler = durableBackend == 'DurableTaskScheduler'

resource appGroup 'Microsoft.Resources/resourceGroups@2024-03-01' = {
  name: appResourceGroupName
  location: location
  tags: allTags
}

resource cluster 'Microsoft.ContainerService/managedClusters@2024-09-01' existing = {
  scope: resourceGroup(aksClusterResourceGroupName)
  name: aksClusterName
}

var kubeUrl = empty(kubeApiServerUrl) ? 'https://${cluster.properties.fqdn}:443' : kubeApiServerUrl

module functionIdentity 'modules/function-identity.bicep' = {
  name: 'nodeclaim-function-identity'
  scope: appGroup
  params: {
    name: '${namePrefix}-func-id'
    location: location
    tags: allTags
  }
}

module bridgeIdentity 'modules/bridge-identity.bicep' = {
  name: 'nodeclaim-bridge-identity'
  scope: appGroup
  params: {
    name: '${namePrefix}-bridge-id'
    location: location
    oidcIssuerUrl: cluster.properties.oidcIssuerProfile.issuerURL
    serviceAccountNamespace: bridgeServiceAccountNamespace
    serviceAccountName: bridgeServiceAccountName
    tags: allTags
  }
}

module storage 'modules/storage.bicep' = {
  name: 'nodeclaim-storage'
  scope: appGroup
  params: {
    name: storageAccountName
    location: location
    eventsQueueName: eventsQueueName
    unavailableOfferingsTableName: unavailableOfferingsTableName
    decisionRecordsTableName: decisionRecordsTableName
    deploymentContainerName: deploymentContainerName
    tags: allTags
  }
}

module monitoring 'modules/monitoring.bicep' = {
  name: 'nodeclaim-monitoring'
  scope: appGroup
  params: {
    namePrefix: namePrefix
    location: location
    alertEmail: alertEmail
    tags: allTags
  }
}

module rbac 'modules/rbac.bicep' = {
  name: 'nodeclaim-rbac'
  params: {
    appResourceGroupName: appGroup.name
    storageAccountName: storage.outputs.name
    eventsQueueName: storage.outputs.eventsQueueName
    appInsightsName: monitoring.outputs.appInsightsName
    functionPrincipalId: functionIdentity.outputs.principalId
    bridgePrincipalId: bridgeIdentity.outputs.principalId
    nodeResourceGroupName: nodeResourceGroupName
    nodeSubnetId: nodeSubnetId
    aksClusterResourceGroupName: aksClusterResourceGroupName
    aksClusterName: aksClusterName
    kubernetesAuthorization: kubernetesAuthorization
    // What node VMs link, read from the cluster (modules/aks-cluster-inputs.bicep): each join or assign
    // action is granted on exactly that resource.
    kubeletIdentityResourceId: clusterInputs.outputs.settings.kubeletIdentityResourceId
    loadBalancerBackendPoolIds: clusterInputs.outputs.settings.loadBalancerBackendPoolIds
    nodeSecurityGroupId: clusterInputs.outputs.settings.nodeSecurityGroupId
    attachNsgToNic: attachNsgToNic
    capacityReservationGroupIds: capacityReservationGroupIds
    roleNameSuffix: '${namePrefix}-${take(suffix, 6)}'
  }
}

module clusterInputs 'modules/aks-cluster-inputs.bicep' = {
  name: 'nodeclaim-aks-cluster-inputs'
  scope: resourceGroup(aksClusterResourceGroupName)
  params: {
    aksClusterName: aksClusterName
    nodeSecurityGroupName: nodeSecurityGroupName
    attachNsgToNic: attachNsgToNic
    kubernetesVersion: kubernetesVersion
    networkPluginMode: networkPluginMode
    networkDataplane: networkDataplane
  }
}

module durableBackendScheduler 'modules/durable-task-scheduler.bicep' = if (durableTaskScheduler) {
  name: 'nodeclaim-durable-task-scheduler'
  scope: appGroup
  params: {
    name: take('${namePrefix}-dts-${suffix}', 64)
    location: location
    taskHubName: durableTaskHubName
    skuName: durableTaskSchedulerSku
    capacity: durableTaskSchedulerCapacity
    ipAllowlist: durableTaskSchedulerIpAllowlist
    functionPrincipalId: functionIdentity.outputs.principalId
    tags: allTags
  }
}

module functionApp 'modules/function-app.bicep' = {
  name: 'nodeclaim-function-app'
  scope: appGroup
  // Roles first, so the first instance can read its storage, secret and cluster (and its task hub, on
  // the Durable Task Scheduler: that module holds the role).
  dependsOn: [rbac, durableBackendScheduler]
  params: {
    name: '${namePrefix}-func-${suffix}'
    location: location
    identityId: functionIdentity.outputs.id
    identityClientId: functionIdentity.outputs.clientId
    storageAccountName: storage.outputs.name
    deploymentContainerUrl: storage.outputs.deploymentContainerUrl
    appInsightsConnectionString: monitoring.outputs.appInsightsConnectionString
    maximumInstanceCount: maximumInstanceCount
    alwaysReadyQueueInstances: alwaysReadyQueueInstances
    alwaysReadyDurableInstances: alwaysReadyDurableInstances
    virtualNetworkSubnetId: functionSubnetId
    clusterName: clusterName
    nodeSubscriptionId: subscription().subscriptionId
    nodeResourceGroupName: nodeResourceGroupName
    nodeLocation: location
    nodeSubnetId: nodeSubnetId
    nodeSshPublicKey: nodeSshPublicKey
    nodeAdminUsername: nodeAdminUsername
    armEndpoint: environment().resourceManager
    kubeApiServerUrl: kubeUrl
    kubeCaCert: kubeCaCert
    bootstrapApiServerUrl: empty(bootstrapApiServerUrl) ? kubeUrl : bootstrapApiServerUrl
    bootstrapCaCert: empty(bootstrapCaCert) ? kubeCaCert : bootstrapCaCert
    eventsQueueName: storage.outputs.eventsQueueName
    unavailableOfferingsTableName: unavailableOfferingsTableName
    decisionRecordsTableName: decisionRecordsTableName
    decisionRecordRetentionHours: decisionRecordRetentionHours
    durableTaskHubName: durableTaskHubName
    durableBackend: durableBackend
    durableTaskSchedulerEndpoint: durableTaskScheduler ? durableBackendScheduler.outputs.endpoint : ''
    durablePartitionCount: durablePartitionCount
    sweepSchedule: sweepSchedule
    registrationTimeoutMinutes: registrationTimeoutMinutes
    clusterInputs: clusterInputs.outputs.settings
    capacityReservationGroupIds: capacityReservationGroupIds
    systemNamespace: bridgeServiceAccountNamespace
    vnetGuid: vnetGuid
    vmMemoryOverheadPercent: vmMemoryOverheadPercent
    kubeTokenScope: kubeTokenScope
    retailPricesEndpoint: retailPricesEndpoint
    buildCommit: buildCommit
    launchPollIntervalSeconds: launchPollIntervalSeconds
    launchMaxPollIntervalSeconds: launchMaxPollIntervalSeconds
    launchDeadlineMinutes: launchDeadlineMinutes
    skuCacheSeconds: skuCacheSeconds
    nodeImageCacheSeconds: nodeImageCacheSeconds
    explainAudience: explainAudience
    gcSchedule: gcSchedule
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
    // azd deploys the `functions` service (azure.yaml) to the app that carries this tag.
    tags: union(allTags, { 'azd-service-name': 'functions' })
  }
}

module registry 'modules/registry.bicep' = {
  name: 'nodeclaim-registry'
  scope: appGroup
  params: {
    name: take('${namePrefix}acr${suffix}', 50)
    location: location
    kubeletPrincipalId: cluster.properties.identityProfile.kubeletidentity.objectId
    tags: allTags
  }
}

@description('Resource group of the app.')
output appResourceGroupName string = appGroup.name
@description('Function App name (for `func azure functionapp publish` or zip deploy).')
output functionAppName string = functionApp.outputs.name
@description('Object (principal) ID of the app identity: the Kubernetes RBAC subject when kubernetesAuthorization is KubernetesRBAC.')
output functionPrincipalId string = functionIdentity.outputs.principalId
@description('Client ID for the bridge ServiceAccount annotation azure.workload.identity/client-id.')
output bridgeIdentityClientId string = bridgeIdentity.outputs.clientId
@description('BRIDGE_QUEUE_SERVICE_URL for the bridge ConfigMap.')
output bridgeQueueServiceUrl string = storage.outputs.queueEndpoint
@description('BRIDGE_QUEUE_NAME for the bridge ConfigMap.')
output bridgeQueueName string = storage.outputs.eventsQueueName
@description('Application Insights component that holds the metric records.')
output appInsightsName string = monitoring.outputs.appInsightsName
@description('Container registry the event bridge image is built into (az acr build).')
output bridgeRegistryName string = registry.outputs.name
@description('Login server of that registry: the bridge image is <loginServer>/nodeclaim-event-bridge:<tag>.')
output bridgeRegistryLoginServer string = registry.outputs.loginServer
@description('durableBackend as deployed: AzureStorage or DurableTaskScheduler.')
output durableBackend string = durableBackend
@description('kubernetesAuthorization as deployed: KubernetesRBAC means infra/k8s/functions must be applied.')
output kubernetesAuthorization string = kubernetesAuthorization
@description('The AKS cluster the app manages, for the deploy hooks.')
output aksClusterName string = aksClusterName
@description('Its resource group.')
output aksClusterResourceGroupName string = aksClusterResourceGroupName
@description('CLUSTER_NAME, for the bridge ConfigMap.')
output clusterName string = clusterName
