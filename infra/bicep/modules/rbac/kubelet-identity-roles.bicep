// Assigning the kubelet identity to node VMs, on that identity only: the app cannot give a VM whose
// custom data it writes any other identity of the node resource group (AKS add-ons keep theirs there).

@description('Principal ID of the Function App identity.')
param functionPrincipalId string

@description('Name of the kubelet identity (KUBELET_IDENTITY_RESOURCE_ID), in this resource group.')
param kubeletIdentityName string

@description('Resource ID of the custom "NodeClaim Kubelet Identity Assigner" role definition.')
param kubeletIdentityAssignerRoleId string

resource kubeletIdentity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' existing = {
  name: kubeletIdentityName
}

resource kubeletIdentityAssigner 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(kubeletIdentity.id, functionPrincipalId, kubeletIdentityAssignerRoleId)
  scope: kubeletIdentity
  properties: {
    roleDefinitionId: kubeletIdentityAssignerRoleId
    principalId: functionPrincipalId
    principalType: 'ServicePrincipal'
  }
}
