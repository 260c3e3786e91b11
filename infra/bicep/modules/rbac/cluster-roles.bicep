// Kubernetes access through Azure RBAC for Kubernetes authorization (the cluster must have it enabled).
// The functions write cluster-scoped objects (Nodes, NodeClaims), so no namespaced built-in role fits.

@description('Principal ID of the Function App identity.')
param functionPrincipalId string

@description('Name of the AKS cluster resource (in this resource group).')
param aksClusterName string

// From the one table both templates read (infra/azure-roles.json).
var aksRbacClusterAdmin = loadJsonContent('../../../azure-roles.json', '$.roles')['Azure Kubernetes Service RBAC Cluster Admin']

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
