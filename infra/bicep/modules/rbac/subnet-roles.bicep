// Subnet join on the node subnet only (it may live in another resource group, as with a BYO VNet).

@description('Principal ID of the Function App identity.')
param functionPrincipalId string

@description('The node subnet\'s resource ID.')
param nodeSubnetId string

@description('Resource ID of the custom "NodeClaim Subnet Joiner" role definition.')
param subnetJoinRoleId string

var parts = split(nodeSubnetId, '/')

resource vnet 'Microsoft.Network/virtualNetworks@2024-05-01' existing = {
  name: parts[8]

  resource subnet 'subnets' existing = {
    name: parts[10]
  }
}

resource subnetJoin 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(vnet::subnet.id, functionPrincipalId, subnetJoinRoleId)
  scope: vnet::subnet
  properties: {
    roleDefinitionId: subnetJoinRoleId
    principalId: functionPrincipalId
    principalType: 'ServicePrincipal'
  }
}
