// Data-plane roles on the app's own resources.

@description('Storage account of the app.')
param storageAccountName string

@description('Events queue the bridge sends to.')
param eventsQueueName string

@description('Application Insights component.')
param appInsightsName string

@description('Principal ID of the Function App identity.')
param functionPrincipalId string

@description('Principal ID of the event bridge identity.')
param bridgePrincipalId string

// Built-in role definition IDs from the one table both templates read (infra/azure-roles.json).
var builtInRoles = loadJsonContent('../../../azure-roles.json', '$.roles')
var roles = {
  storageBlobDataOwner: builtInRoles['Storage Blob Data Owner']
  storageQueueDataContributor: builtInRoles['Storage Queue Data Contributor']
  storageQueueDataMessageSender: builtInRoles['Storage Queue Data Message Sender']
  storageTableDataContributor: builtInRoles['Storage Table Data Contributor']
  monitoringMetricsPublisher: builtInRoles['Monitoring Metrics Publisher']
}

resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName

  resource queueService 'queueServices' existing = {
    name: 'default'

    resource eventsQueue 'queues' existing = {
      name: eventsQueueName
    }
  }
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: appInsightsName
}

// The Functions host keeps leases and timer state in blobs and Durable Functions its task hub in
// blobs, queues and tables; all three data roles are what identity-based AzureWebJobsStorage needs.
var functionStorageRoles = [
  roles.storageBlobDataOwner
  roles.storageQueueDataContributor
  roles.storageTableDataContributor
]

resource functionStorage 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for roleId in functionStorageRoles: {
    name: guid(storage.id, functionPrincipalId, roleId)
    scope: storage
    properties: {
      roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleId)
      principalId: functionPrincipalId
      principalType: 'ServicePrincipal'
    }
  }
]

// The bridge only sends, and only to the events queue.
resource bridgeSender 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(storage::queueService::eventsQueue.id, bridgePrincipalId, roles.storageQueueDataMessageSender)
  scope: storage::queueService::eventsQueue
  properties: {
    roleDefinitionId: subscriptionResourceId(
      'Microsoft.Authorization/roleDefinitions',
      roles.storageQueueDataMessageSender
    )
    principalId: bridgePrincipalId
    principalType: 'ServicePrincipal'
  }
}

// Application Insights has local auth disabled, so telemetry needs this role.
resource functionTelemetry 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(appInsights.id, functionPrincipalId, roles.monitoringMetricsPublisher)
  scope: appInsights
  properties: {
    roleDefinitionId: subscriptionResourceId(
      'Microsoft.Authorization/roleDefinitions',
      roles.monitoringMetricsPublisher
    )
    principalId: functionPrincipalId
    principalType: 'ServicePrincipal'
  }
}
