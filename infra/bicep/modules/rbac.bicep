// Every permission of the two identities, each on the resource it is used on:
//   Function App identity: storage data (host, Durable Functions, queue, table), telemetry
//     publishing, VMs + their NICs and disks in the node resource group, assigning the kubelet identity
//     (that identity only), joining the outbound backend pool (that pool only), the node NSG (only when
//     the NIC carries it) and the node subnet, deploying into each configured Capacity Reservation Group
//     (none when none is configured), the Resource SKU catalog, async-operation status and the community
//     gallery's node image versions (subscription-wide reads), and the Kubernetes API (with AzureRBAC,
//     custom roles holding what the Kubernetes roles of infra/k8s/functions grant; with KubernetesRBAC,
//     those Kubernetes roles themselves).
//   Bridge identity: send messages to the events queue, nothing else.
// With durableBackend=DurableTaskScheduler the app identity's role on its task hub is assigned beside the
// task hub, in modules/durable-task-scheduler.bicep.
// Custom roles hold exactly the actions the app's Azure calls need, instead of Virtual Machine
// Contributor (which can also run commands on, and reset passwords of, every VM in the group).
targetScope = 'subscription'

// The custom roles' names, descriptions and actions, from the one table Terraform and the local ARM
// emulator read too (infra/azure-roles.json).
var customRoles = loadJsonContent('../../azure-roles.json', '$.customRoles')

@description('Resource group of the app (storage, Application Insights).')
param appResourceGroupName string

@description('Storage account of the app.')
param storageAccountName string

@description('Events queue the bridge sends to.')
param eventsQueueName string

@description('Application Insights component the app sends telemetry to.')
param appInsightsName string

@description('Principal ID of the Function App identity.')
param functionPrincipalId string

@description('Principal ID of the event bridge identity.')
param bridgePrincipalId string

@description('Resource group the node VMs live in.')
param nodeResourceGroupName string

@description('Subnet node NICs join (AZURE_SUBNET_ID).')
param nodeSubnetId string

@description('Resource group of the AKS cluster resource.')
param aksClusterResourceGroupName string

@description('Name of the AKS cluster resource.')
param aksClusterName string

@description('AzureRBAC: grant the custom roles kubernetesClusterAccess (on the cluster) and kubernetesKubeSystemAccess (on its kube-system namespace) and kubernetesSystemNamespaceAccess (on the app's namespace), what infra/k8s/functions grants. KubernetesRBAC: grant nothing in Azure; bind the identity with the roles in infra/k8s/functions.')
@allowed(['AzureRBAC', 'KubernetesRBAC'])
param kubernetesAuthorization string = 'KubernetesRBAC'

@description('KUBELET_IDENTITY_RESOURCE_ID: the one user-assigned identity node VMs get.')
param kubeletIdentityResourceId string

@description('LOAD_BALANCER_BACKEND_POOL_IDS: the backend pools node NICs join, comma-separated; empty for none.')
param loadBalancerBackendPoolIds string

@description('NODE_SECURITY_GROUP_ID: the node NSG.')
param nodeSecurityGroupId string

@description('ATTACH_NSG_TO_NIC: the NIC carries the node NSG (a VNet you brought); otherwise no NSG is joined.')
param attachNsgToNic bool

@description('CAPACITY_RESERVATION_GROUP_IDS: the Capacity Reservation Groups launches may use; the reservation role is assigned on each, and none when empty.')
param capacityReservationGroupIds array = []

@description('Makes custom role names unique in the tenant (role names are tenant-wide).')
param roleNameSuffix string

// /subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Network/virtualNetworks/{vnet}/subnets/{subnet}
var subnetParts = split(nodeSubnetId, '/')
var subnetSubscriptionId = subnetParts[2]
var subnetResourceGroupName = subnetParts[4]
var kubeletIdentityParts = split(kubeletIdentityResourceId, '/')
var nodeSecurityGroupParts = split(nodeSecurityGroupId, '/')
var outboundPoolIds = filter(map(split(loadBalancerBackendPoolIds, ','), id => trim(id)), id => !empty(id))
var azureRbac = kubernetesAuthorization == 'AzureRBAC'

// The seed of each custom role's definition name (a GUID; kept across versions, so an update changes
// the definition in place instead of creating a second one with the same, tenant-unique, role name).
var roleSeeds = {
  vmOperator: 'nodeclaim-vm-operator'
  kubeletIdentityAssigner: 'nodeclaim-kubelet-identity-assigner'
  outboundPoolJoiner: 'nodeclaim-outbound-pool-joiner'
  nodeSecurityGroupJoiner: 'nodeclaim-node-nsg-joiner'
  subnetJoiner: 'nodeclaim-subnet-joiner'
  computeCatalogReader: 'nodeclaim-compute-catalog-reader'
  capacityReservationUser: 'nodeclaim-capacity-reservation-user'
  kubernetesClusterAccess: 'nodeclaim-kubernetes-cluster-access'
  kubernetesKubeSystemAccess: 'nodeclaim-kubernetes-kube-system-access'
  kubernetesSystemNamespaceAccess: 'nodeclaim-kubernetes-system-namespace-access'
}
var roleIds = toObject(
  items(customRoles),
  role => role.key,
  role =>
    subscriptionResourceId(
      'Microsoft.Authorization/roleDefinitions',
      guid(subscription().id, roleSeeds[role.key], roleNameSuffix)
    )
)

// One definition per custom role of the table; the AKS data roles only with AzureRBAC. Only the subnet
// role may be assigned in another subscription (a VNet you brought may live there).
resource roleDefinitions 'Microsoft.Authorization/roleDefinitions@2022-04-01' = [
  for role in items(customRoles): if (azureRbac || !startsWith(role.value.assignedAt, 'aks')) {
    name: guid(subscription().id, roleSeeds[role.key], roleNameSuffix)
    properties: {
      roleName: '${role.value.roleName} (${roleNameSuffix})'
      description: role.value.description
      type: 'CustomRole'
      permissions: [
        {
          actions: role.value.actions
          notActions: []
          dataActions: role.value.?dataActions ?? []
          notDataActions: []
        }
      ]
      assignableScopes: role.value.assignedAt == 'nodeSubnet'
        ? union([subscription().id], ['/subscriptions/${subnetSubscriptionId}'])
        : [subscription().id]
    }
  }
]

resource computeReader 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(subscription().id, functionPrincipalId, roleIds.computeCatalogReader)
  dependsOn: [roleDefinitions]
  properties: {
    roleDefinitionId: roleIds.computeCatalogReader
    principalId: functionPrincipalId
    principalType: 'ServicePrincipal'
  }
}

module appRoles 'rbac/app-resource-roles.bicep' = {
  name: 'nodeclaim-rbac-app'
  scope: resourceGroup(appResourceGroupName)
  params: {
    storageAccountName: storageAccountName
    eventsQueueName: eventsQueueName
    appInsightsName: appInsightsName
    functionPrincipalId: functionPrincipalId
    bridgePrincipalId: bridgePrincipalId
  }
}

module nodeRoles 'rbac/node-resource-group-roles.bicep' = {
  name: 'nodeclaim-rbac-nodes'
  scope: resourceGroup(nodeResourceGroupName)
  dependsOn: [roleDefinitions]
  params: {
    functionPrincipalId: functionPrincipalId
    vmOperatorRoleId: roleIds.vmOperator
  }
}

module kubeletIdentityRoles 'rbac/kubelet-identity-roles.bicep' = {
  name: 'nodeclaim-rbac-kubelet-identity'
  scope: resourceGroup(kubeletIdentityParts[2], kubeletIdentityParts[4])
  dependsOn: [roleDefinitions]
  params: {
    functionPrincipalId: functionPrincipalId
    kubeletIdentityName: kubeletIdentityParts[8]
    kubeletIdentityAssignerRoleId: roleIds.kubeletIdentityAssigner
  }
}

// /subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Network/loadBalancers/{lb}/backendAddressPools/{pool}
module outboundPoolRoles 'rbac/outbound-pool-roles.bicep' = [
  for (poolId, index) in outboundPoolIds: {
    name: 'nodeclaim-rbac-outbound-pool-${index}'
    scope: resourceGroup(split(poolId, '/')[2], split(poolId, '/')[4])
    dependsOn: [roleDefinitions]
    params: {
      functionPrincipalId: functionPrincipalId
      loadBalancerName: split(poolId, '/')[8]
      backendPoolName: split(poolId, '/')[10]
      outboundPoolJoinerRoleId: roleIds.outboundPoolJoiner
    }
  }
]

module nodeSecurityGroupRoles 'rbac/node-security-group-roles.bicep' = if (attachNsgToNic) {
  name: 'nodeclaim-rbac-node-nsg'
  scope: resourceGroup(nodeSecurityGroupParts[2], nodeSecurityGroupParts[4])
  dependsOn: [roleDefinitions]
  params: {
    functionPrincipalId: functionPrincipalId
    nodeSecurityGroupName: nodeSecurityGroupParts[8]
    nodeSecurityGroupJoinerRoleId: roleIds.nodeSecurityGroupJoiner
  }
}

module subnetRoles 'rbac/subnet-roles.bicep' = {
  name: 'nodeclaim-rbac-subnet'
  scope: resourceGroup(subnetSubscriptionId, subnetResourceGroupName)
  dependsOn: [roleDefinitions]
  params: {
    functionPrincipalId: functionPrincipalId
    nodeSubnetId: nodeSubnetId
    subnetJoinRoleId: roleIds.subnetJoiner
  }
}

// /subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Compute/capacityReservationGroups/{group}
module capacityReservationGroupRoles 'rbac/capacity-reservation-group-roles.bicep' = [
  for (groupId, index) in capacityReservationGroupIds: {
    name: 'nodeclaim-rbac-reservation-group-${index}'
    scope: resourceGroup(split(groupId, '/')[2], split(groupId, '/')[4])
    dependsOn: [roleDefinitions]
    params: {
      functionPrincipalId: functionPrincipalId
      capacityReservationGroupName: split(groupId, '/')[8]
      capacityReservationUserRoleId: roleIds.capacityReservationUser
    }
  }
]

module clusterRoles 'rbac/cluster-roles.bicep' = if (azureRbac) {
  name: 'nodeclaim-rbac-cluster'
  scope: resourceGroup(aksClusterResourceGroupName)
  dependsOn: [roleDefinitions]
  params: {
    functionPrincipalId: functionPrincipalId
    aksClusterName: aksClusterName
    kubernetesClusterAccessRoleId: roleIds.kubernetesClusterAccess
    kubernetesKubeSystemAccessRoleId: roleIds.kubernetesKubeSystemAccess
    kubernetesSystemNamespaceAccessRoleId: roleIds.kubernetesSystemNamespaceAccess
  }
}
