// What every node is told about the AKS cluster, read once from the cluster resource at deployment: its
// Kubernetes version, network profile, cluster DNS IP, kubelet identity, node NSG and outbound load
// balancer pool. The app passes them into each node's AKSNodeConfig (see shared/config/settings.ts).
// Deployed at the cluster's resource group.

@description('Name of the existing AKS cluster resource.')
param aksClusterName string

@description('The node NSG in the node resource group, aks-agentpool-<cluster id>-nsg (`az network nsg list -g <node resource group>`).')
param nodeSecurityGroupName string

@description('true when the cluster runs on a VNet you brought (then the NIC carries the node NSG itself, as AKS does).')
param attachNsgToNic bool = false

@description('Overrides the cluster\'s current Kubernetes version (major.minor.patch); empty reads it from the cluster.')
param kubernetesVersion string = ''

@description('Overrides the cluster\'s networkProfile.networkPluginMode: overlay, or none for pod IPs from the node subnet (written as empty); empty reads it from the cluster.')
param networkPluginMode string = ''

@description('Overrides the cluster\'s networkProfile.networkDataplane (cilium or azure); empty reads it from the cluster.')
param networkDataplane string = ''

resource cluster 'Microsoft.ContainerService/managedClusters@2024-09-01' existing = {
  name: aksClusterName
}

var nodeGroup = cluster.properties.nodeResourceGroup
var network = cluster.properties.networkProfile
var outboundPool = resourceId(
  subscription().subscriptionId,
  nodeGroup,
  'Microsoft.Network/loadBalancers/backendAddressPools',
  'kubernetes',
  'aksOutboundBackendPool'
)

@description('App settings for the node configuration, by the names shared/config/settings.ts reads.')
output settings object = {
  kubernetesVersion: empty(kubernetesVersion) ? cluster.properties.currentKubernetesVersion : kubernetesVersion
  tenantId: subscription().tenantId
  networkPlugin: network.networkPlugin
  networkPluginMode: empty(networkPluginMode) ? (network.?networkPluginMode ?? '') : (networkPluginMode == 'none' ? '' : networkPluginMode)
  networkDataplane: empty(networkDataplane) ? (network.?networkDataplane ?? 'azure') : networkDataplane
  dnsServiceIp: network.?dnsServiceIP ?? '10.0.0.10'
  nodeSecurityGroupId: resourceId(
    subscription().subscriptionId,
    nodeGroup,
    'Microsoft.Network/networkSecurityGroups',
    nodeSecurityGroupName
  )
  attachNsgToNic: string(attachNsgToNic)
  kubeletIdentityResourceId: cluster.properties.identityProfile.kubeletidentity.resourceId
  kubeletIdentityClientId: cluster.properties.identityProfile.kubeletidentity.clientId
  // Only outboundType loadBalancer has the cluster load balancer and its outbound pool.
  loadBalancerBackendPoolIds: (network.?outboundType ?? 'loadBalancer') == 'loadBalancer' ? outboundPool : ''
}
