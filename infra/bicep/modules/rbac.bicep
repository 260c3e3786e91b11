// Every permission of the two identities, each at the narrowest scope that works:
//   Function App identity: storage data (host, Durable Functions, queue, table), telemetry
//     publishing, VMs + their NICs and disks in the node resource group (with the kubelet identity, the
//     outbound load balancer pool and the node NSG they attach, which AKS keeps there), the Resource SKU
//     catalog, async-operation status and the community gallery's node image versions (subscription-wide
//     reads), joining the node subnet, and the Kubernetes API (Azure RBAC role, or the Kubernetes
//     roles in infra/k8s/functions).
//   Bridge identity: send messages to the events queue, nothing else.
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

@description('AzureRBAC: grant "Azure Kubernetes Service RBAC Cluster Admin" on the cluster. KubernetesRBAC: grant nothing in Azure; bind the identity with the roles in infra/k8s/functions.')
@allowed(['AzureRBAC', 'KubernetesRBAC'])
param kubernetesAuthorization string = 'KubernetesRBAC'

@description('Makes custom role names unique in the tenant (role names are tenant-wide).')
param roleNameSuffix string

// /subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Network/virtualNetworks/{vnet}/subnets/{subnet}
var subnetParts = split(nodeSubnetId, '/')
var subnetSubscriptionId = subnetParts[2]
var subnetResourceGroupName = subnetParts[4]

resource vmOperatorRole 'Microsoft.Authorization/roleDefinitions@2022-04-01' = {
  name: guid(subscription().id, 'nodeclaim-vm-operator', roleNameSuffix)
  properties: {
    roleName: '${customRoles.vmOperator.roleName} (${roleNameSuffix})'
    description: customRoles.vmOperator.description
    type: 'CustomRole'
    permissions: [
      {
        actions: customRoles.vmOperator.actions
        notActions: []
      }
    ]
    assignableScopes: [subscription().id]
  }
}

resource computeReaderRole 'Microsoft.Authorization/roleDefinitions@2022-04-01' = {
  name: guid(subscription().id, 'nodeclaim-compute-catalog-reader', roleNameSuffix)
  properties: {
    roleName: '${customRoles.computeCatalogReader.roleName} (${roleNameSuffix})'
    description: customRoles.computeCatalogReader.description
    type: 'CustomRole'
    permissions: [
      {
        actions: customRoles.computeCatalogReader.actions
        notActions: []
      }
    ]
    assignableScopes: [subscription().id]
  }
}

resource capacityReservationRole 'Microsoft.Authorization/roleDefinitions@2022-04-01' = {
  name: guid(subscription().id, 'nodeclaim-capacity-reservation-user', roleNameSuffix)
  properties: {
    roleName: '${customRoles.capacityReservationUser.roleName} (${roleNameSuffix})'
    description: customRoles.capacityReservationUser.description
    type: 'CustomRole'
    permissions: [
      {
        actions: customRoles.capacityReservationUser.actions
        notActions: []
      }
    ]
    assignableScopes: [subscription().id]
  }
}

resource subnetJoinRole 'Microsoft.Authorization/roleDefinitions@2022-04-01' = {
  name: guid(subscription().id, 'nodeclaim-subnet-joiner', roleNameSuffix)
  properties: {
    roleName: '${customRoles.subnetJoiner.roleName} (${roleNameSuffix})'
    description: customRoles.subnetJoiner.description
    type: 'CustomRole'
    permissions: [
      {
        actions: customRoles.subnetJoiner.actions
        notActions: []
      }
    ]
    assignableScopes: union([subscription().id], ['/subscriptions/${subnetSubscriptionId}'])
  }
}

resource computeReader 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(subscription().id, functionPrincipalId, computeReaderRole.id)
  properties: {
    roleDefinitionId: computeReaderRole.id
    principalId: functionPrincipalId
    principalType: 'ServicePrincipal'
  }
}

// Groups may sit in any resource group of the subscription (CAPACITY_RESERVATION_GROUP_IDS names them).
resource capacityReservationUser 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(subscription().id, functionPrincipalId, capacityReservationRole.id)
  properties: {
    roleDefinitionId: capacityReservationRole.id
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
  params: {
    functionPrincipalId: functionPrincipalId
    vmOperatorRoleId: vmOperatorRole.id
  }
}

module subnetRoles 'rbac/subnet-roles.bicep' = {
  name: 'nodeclaim-rbac-subnet'
  scope: resourceGroup(subnetSubscriptionId, subnetResourceGroupName)
  params: {
    functionPrincipalId: functionPrincipalId
    nodeSubnetId: nodeSubnetId
    subnetJoinRoleId: subnetJoinRole.id
  }
}

module clusterRoles 'rbac/cluster-roles.bicep' = if (kubernetesAuthorization == 'AzureRBAC') {
  name: 'nodeclaim-rbac-cluster'
  scope: resourceGroup(aksClusterResourceGroupName)
  params: {
    functionPrincipalId: functionPrincipalId
    aksClusterName: aksClusterName
  }
}
