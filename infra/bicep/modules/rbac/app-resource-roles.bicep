// Data-plane roles on the app's own resources.

@description('Storage account of the app.')
param storageAccountName string

@description('Events queue the bridge sends to.')
param eventsQueueName string

@description('Key Vault that holds the bootstrap token.')
param keyVaultName string

@description('Application Insights component.')
param appInsightsName string

@description('Principal ID of the Function App identity.')
param functionPrincipalId string

@description('Principal ID of the event bridge identity.')
param bridgePrincipalId string

// Built-in role definition IDs (the same in every tenant).
var roles = {
  storageBlobDataOwner: 'b7e6dc6d-f1e8-4753-8033-0f4d7aec4b8b'
  storageQueueDataContributor: '974c5e8b-45b9-4653-ba55-5f855dd0fb88'
  storageQueueDataMessageSender: 'c6a89b2d-59bc-44d0-9896-0f6e12d7b80a'
  storageTableDataContributor: '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3'
  keyVaultSecretsUser: '4633458b-17de-408a-b874-0445c86b69e6'
  monitoringMetricsPublisher: '3913510d-42f4-4e42-8a64-420c390055eb'
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

resource vault 'Microsoft.KeyVault/vaults@2023-07-01' existing = {
  name: keyVaultName
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

resource functionSecrets 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(vault.id, functionPrincipalId, roles.keyVaultSecretsUser)
  scope: vault
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.keyVaultSecretsUser)
    principalId: functionPrincipalId
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
