// The custom VM operator role on the resource group the node VMs are created in.

@description('Principal ID of the Function App identity.')
param functionPrincipalId string

@description('Resource ID of the custom "NodeClaim VM Operator" role definition.')
param vmOperatorRoleId string

resource vmOperator 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(resourceGroup().id, functionPrincipalId, vmOperatorRoleId)
  properties: {
    roleDefinitionId: vmOperatorRoleId
    principalId: functionPrincipalId
    principalType: 'ServicePrincipal'
  }
}
