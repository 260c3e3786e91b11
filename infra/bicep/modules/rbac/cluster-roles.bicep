// Kubernetes access through Azure RBAC for Kubernetes authorization (the cluster must have it enabled).
// The functions write cluster-scoped objects (Nodes, NodeClaims), so no namespaced built-in role fits.

@description('Principal ID of the Function App identity.')
param functionPrincipalId string

@description('Name of the AKS cluster resource (in this resource group).')
param aksClusterName string

var aksRbacClusterAdmin = 'b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b'

resource cluster 'Microsoft.ContainerService/managedClusters@2024-09-01' existing = {
  name: aksClusterName
}

resource clusterAdmin 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(cluster.id, functionPrincipalId, aksRbacClusterAdmin)
  scope: cluster
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', aksRbacClusterAdmin)
    principalId: functionPrincipalId
    principalType: 'ServicePrincipal'
  }
}
