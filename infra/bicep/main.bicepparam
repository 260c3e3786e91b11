// Example parameters: copy, fill in, deploy with
//   az deployment sub create -l westus2 -f infra/bicep/main.bicep -p infra/bicep/main.bicepparam
using 'main.bicep'

param location = 'westus2'
param namePrefix = 'ncprod'
param clusterName = 'prod-aks'
param aksClusterResourceGroupName = 'prod-aks-rg'
param aksClusterName = 'prod-aks'
param nodeResourceGroupName = 'MC_prod-aks-rg_prod-aks_westus2'
param nodeSubnetId = '/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/prod-network-rg/providers/Microsoft.Network/virtualNetworks/prod-vnet/subnets/nodes'
param nodeSshPublicKey = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExampleKeyReplaceMe operator@example'
param nodeSecurityGroupName = 'aks-agentpool-12345678-nsg'
param attachNsgToNic = true
// base64 of the cluster CA: kubectl config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}'
param kubeCaCert = readEnvironmentVariable('KUBE_CA_CERT')
param kubernetesAuthorization = 'KubernetesRBAC'
// The groups node VMs may be launched into; the app is granted read and deploy on these only.
param capacityReservationGroupIds = []
// The Durable backend: AzureStorage (the app's storage account), or DurableTaskScheduler with its SKU
// (docs/cost.md, "The Durable backend", sizes it from the node count).
param durableBackend = 'AzureStorage'
param durableTaskSchedulerSku = 'Consumption'
param durableTaskSchedulerCapacity = 1
param durableTaskSchedulerIpAllowlist = ['0.0.0.0/0']
param durablePartitionCount = 4
// Every other app setting, at the app's default (docs/settings.md). Change them here, not on the Function
// App: each deployment writes the whole set of app settings, so one changed by hand is lost at the next.
param bridgeServiceAccountNamespace = 'nodeclaim-system'
param nodeAdminUsername = 'azureuser'
param vnetGuid = ''
param vmMemoryOverheadPercent = '0.075'
param kubeApiServerUrl = ''
param kubeTokenScope = '6dae42f8-4368-4678-94ff-3960e28e3630/.default'
param bootstrapApiServerUrl = ''
param bootstrapCaCert = ''
param kubernetesVersion = ''
param networkPluginMode = ''
param networkDataplane = ''
param retailPricesEndpoint = 'https://prices.azure.com'
param eventsQueueName = 'nodeclaim-events'
param unavailableOfferingsTableName = 'unavailableofferings'
param decisionRecordsTableName = 'decisionrecords'
param decisionRecordRetentionHours = 24
param durableTaskHubName = 'nodeclaims'
param buildCommit = ''
param launchPollIntervalSeconds = 5
param launchMaxPollIntervalSeconds = 60
param launchDeadlineMinutes = 15
param skuCacheSeconds = 3600
param nodeImageCacheSeconds = 3600
param explainAudience = ''
param sweepSchedule = '*/15 * * * * *'
param gcSchedule = '0 */5 * * * *'
param registrationTimeoutMinutes = 15
param replacementPollSeconds = 5
param replacementFallbackSeconds = 180
param replacementTimeoutMinutes = 30
param replacementBackoffMinutes = 5
param drainPollSeconds = 5
param orphanVmGraceMinutes = 10
param consolidationValidationSeconds = 15
param requestTimeoutSeconds = 30
param metricsPerNode = false
param batchIdleDuration = '1s'
param batchMaxDuration = '10s'
param provisioningSelector = ''
param preferencePolicy = 'Respect'
param minValuesPolicy = 'Strict'
param featureGates = ''
param repairPolicies = 'Ready=False:10m:reboot,Ready=Unknown:10m:reboot,kubernetes.azure.com/NodeHealthy=False:0s:reboot,PreemptionScheduled=True:0s:preempted'
param repairMaxReboots = 1
param repairRebootRecoverySeconds = 300
param preemptionDrainSeconds = 15
param rolloutPolicy = 'Canary'
param rolloutCanary = '1'
param rolloutPollSeconds = 10
param rolloutSoakSeconds = 300
param rolloutInitializedWithinSeconds = 600
param rolloutPodReadyWithinSeconds = 300
param rolloutMaxPodRestarts = 3
param alertEmail = 'oncall@example.com'
param tags = {
  environment: 'prod'
}
