// The Function App's storage account: the Functions host (leases, timers), Durable Functions (task hub
// queues, tables, blobs), the bridge's events queue, the unavailable-offerings table and the deployment
// package container. Shared keys are disabled: every client authenticates with an Entra identity.

@description('Storage account name (3-24 lower-case letters and digits, globally unique).')
@minLength(3)
@maxLength(24)
param name string

@description('Azure region.')
param location string

@description('Queue the event bridge sends to and the objectEvents function reads (EVENTS_QUEUE_NAME).')
param eventsQueueName string

@description('Table of recently failed offerings (UNAVAILABLE_OFFERINGS_TABLE).')
param unavailableOfferingsTableName string

@description('Table of the decision records explain reads (DECISION_RECORDS_TABLE).')
param decisionRecordsTableName string

@description('Blob container that holds the Flex Consumption deployment package.')
param deploymentContainerName string

@description('Tags for every resource.')
param tags object = {}

resource account 'Microsoft.Storage/storageAccounts@2023-05-01' = {
  name: name
  location: location
  tags: tags
  kind: 'StorageV2'
  sku: { name: 'Standard_LRS' }
  properties: {
    allowSharedKeyAccess: false
    defaultToOAuthAuthentication: true
    allowBlobPublicAccess: false
    minimumTlsVersion: 'TLS1_2'
    supportsHttpsTrafficOnly: true
    publicNetworkAccess: 'Enabled'
  }
}

resource blobs 'Microsoft.Storage/storageAccounts/blobServices@2023-05-01' = {
  parent: account
  name: 'default'
}

resource deploymentContainer 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = {
  parent: blobs
  name: deploymentContainerName
  properties: { publicAccess: 'None' }
}

resource queues 'Microsoft.Storage/storageAccounts/queueServices@2023-05-01' = {
  parent: account
  name: 'default'
}

// The bridge only sends, so the queue must exist before it starts.
resource eventsQueue 'Microsoft.Storage/storageAccounts/queueServices/queues@2023-05-01' = {
  parent: queues
  name: eventsQueueName
}

// Created here rather than on first failure so the poison-queue alert and operators find it at once.
resource eventsPoisonQueue 'Microsoft.Storage/storageAccounts/queueServices/queues@2023-05-01' = {
  parent: queues
  name: '${eventsQueueName}-poison'
}

resource tables 'Microsoft.Storage/storageAccounts/tableServices@2023-05-01' = {
  parent: account
  name: 'default'
}

resource unavailableOfferings 'Microsoft.Storage/storageAccounts/tableServices/tables@2023-05-01' = {
  parent: tables
  name: unavailableOfferingsTableName
}

resource decisionRecords 'Microsoft.Storage/storageAccounts/tableServices/tables@2023-05-01' = {
  parent: tables
  name: decisionRecordsTableName
}

output id string = account.id
output name string = account.name
output blobEndpoint string = account.properties.primaryEndpoints.blob
output queueEndpoint string = account.properties.primaryEndpoints.queue
output deploymentContainerUrl string = '${account.properties.primaryEndpoints.blob}${deploymentContainerName}'
output eventsQueueName string = eventsQueue.name
