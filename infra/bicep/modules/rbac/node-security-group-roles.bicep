// Attaching the node NSG to node NICs (on a VNet you brought, ATTACH_NSG_TO_NIC), on that NSG only.

@description('Principal ID of the Function App identity.')
param functionPrincipalId string

@description('Name of the node NSG (NODE_SECURITY_GROUP_ID), in this resource group.')
param nodeSecurityGroupName string

@description('Resource ID of the custom "NodeClaim Node NSG Joiner" role definition.')
param nodeSecurityGroupJoinerRoleId string

resource nodeSecurityGroup 'Microsoft.Network/networkSecurityGroups@2024-05-01' existing = {
  name: nodeSecurityGroupName
}

resource nodeSecurityGroupJoiner 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(nodeSecurityGroup.id, functionPrincipalId, nodeSecurityGroupJoinerRoleId)
  scope: nodeSecurityGroup
  properties: {
    roleDefinitionId: nodeSecurityGroupJoinerRoleId
    principalId: functionPrincipalId
    principalType: 'ServicePrincipal'
  }
}
