// Kubernetes access through Azure RBAC for Kubernetes authorization (kubernetesAuthorization=AzureRBAC;
// the cluster must have it enabled): the custom roles that hold, as AKS data actions, what the Kubernetes
// roles of infra/k8s/functions grant (test/unit/infra-roles.test.ts derives them from those manifests).
// The cluster-wide role's custom-resource actions are limited by the assignment's ABAC condition to the
// groups and resources the ClusterRole names; each namespaced Role's actions are assigned on its own
// namespace only (the bootstrap tokens' in kube-system, the sweep Lease's in the app's namespace).

@description('Principal ID of the Function App identity.')
param functionPrincipalId string

@description('Name of the AKS cluster resource (in this resource group).')
param aksClusterName string

@description('Resource ID of the custom "NodeClaim Kubernetes Cluster Access" role definition.')
param kubernetesClusterAccessRoleId string

@description('Resource ID of the custom "NodeClaim Kubernetes kube-system Access" role definition.')
param kubernetesKubeSystemAccessRoleId string

@description('Resource ID of the custom "NodeClaim Kubernetes System Namespace Access" role definition.')
param kubernetesSystemNamespaceAccessRoleId string

// From the one table both templates read (infra/azure-roles.json).
var customRoles = loadJsonContent('../../../azure-roles.json', '$.customRoles')

resource cluster 'Microsoft.ContainerService/managedClusters@2024-09-01' existing = {
  name: aksClusterName

  // Only its ID is used: Azure RBAC scopes a namespace's assignments to <cluster ID>/namespaces/<name>.
  resource kubeSystem 'namespaces' existing = {
    name: customRoles.kubernetesKubeSystemAccess.namespace
  }

  resource systemNamespace 'namespaces' existing = {
    name: customRoles.kubernetesSystemNamespaceAccess.namespace
  }
}

resource clusterAccess 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(cluster.id, functionPrincipalId, kubernetesClusterAccessRoleId)
  scope: cluster
  properties: {
    roleDefinitionId: kubernetesClusterAccessRoleId
    principalId: functionPrincipalId
    principalType: 'ServicePrincipal'
    condition: customRoles.kubernetesClusterAccess.condition
    conditionVersion: '2.0'
  }
}

resource kubeSystemAccess 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(cluster::kubeSystem.id, functionPrincipalId, kubernetesKubeSystemAccessRoleId)
  scope: cluster::kubeSystem
  properties: {
    roleDefinitionId: kubernetesKubeSystemAccessRoleId
    principalId: functionPrincipalId
    principalType: 'ServicePrincipal'
  }
}

resource systemNamespaceAccess 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(cluster::systemNamespace.id, functionPrincipalId, kubernetesSystemNamespaceAccessRoleId)
  scope: cluster::systemNamespace
  properties: {
    roleDefinitionId: kubernetesSystemNamespaceAccessRoleId
    principalId: functionPrincipalId
    principalType: 'ServicePrincipal'
  }
}
