// Reading one Capacity Reservation Group of CAPACITY_RESERVATION_GROUP_IDS and deploying node VMs into
// it, on that group only (rbac.bicep deploys this once per configured group, and never without one).

@description('Principal ID of the Function App identity.')
param functionPrincipalId string

@description('Name of the group, in this resource group.')
param capacityReservationGroupName string

@description('Resource ID of the custom "NodeClaim Capacity Reservation User" role definition.')
param capacityReservationUserRoleId string

resource group 'Microsoft.Compute/capacityReservationGroups@2024-07-01' existing = {
  name: capacityReservationGroupName
}

resource capacityReservationUser 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(group.id, functionPrincipalId, capacityReservationUserRoleId)
  scope: group
  properties: {
    roleDefinitionId: capacityReservationUserRoleId
    principalId: functionPrincipalId
    principalType: 'ServicePrincipal'
  }
}
