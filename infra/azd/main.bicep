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
  }
}

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
