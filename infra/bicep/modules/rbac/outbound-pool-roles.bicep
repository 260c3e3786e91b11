// Joining node NICs to the cluster's outbound backend pool, on that pool only: not the load balancer's
// other pools (those of LoadBalancer Services), nor any other load balancer.

@description('Principal ID of the Function App identity.')
param functionPrincipalId string

@description('The load balancer of the pool (kubernetes), in this resource group.')
param loadBalancerName string

@description('The backend pool (aksOutboundBackendPool).')
param backendPoolName string

@description('Resource ID of the custom "NodeClaim Outbound Pool Joiner" role definition.')
param outboundPoolJoinerRoleId string

resource loadBalancer 'Microsoft.Network/loadBalancers@2024-05-01' existing = {
  name: loadBalancerName

  resource backendPool 'backendAddressPools' existing = {
    name: backendPoolName
  }
}

resource outboundPoolJoiner 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(loadBalancer::backendPool.id, functionPrincipalId, outboundPoolJoinerRoleId)
  scope: loadBalancer::backendPool
  properties: {
    roleDefinitionId: outboundPoolJoinerRoleId
    principalId: functionPrincipalId
    principalType: 'ServicePrincipal'
  }
}
