// The Durable Task Scheduler backend, deployed only with durableBackend=DurableTaskScheduler: a scheduler
// (Consumption, or Dedicated with its capacity units), the one task hub the app uses (named as
// DURABLE_TASK_HUB, which host.json's hubName reads), and the app identity's data role on that task hub
// and nothing wider. The scheduler accepts identity-based connections only, so no setting holds a secret.
// Resource shapes: https://learn.microsoft.com/azure/templates/microsoft.durabletask/schedulers and
// .../schedulers/taskhubs; the role: infra/azure-roles.json (durableTaskRoles).

@description('Scheduler name (3-64 letters, digits and hyphens).')
@minLength(3)
@maxLength(64)
param name string

@description('Azure region (the Function App\'s, which the docs recommend for latency).')
param location string

@description('Task hub name: DURABLE_TASK_HUB (3-64 letters, digits and hyphens).')
@minLength(3)
@maxLength(64)
param taskHubName string

@description('Consumption: billed per action, up to 500 actions/s. Dedicated: billed per capacity unit, 2,000 actions/s each (docs/cost.md, "The Durable backend").')
@allowed(['Consumption', 'Dedicated'])
param skuName string = 'Consumption'

@description('Capacity units of the Dedicated SKU (1-3; 3 for high availability); ignored for Consumption.')
@minValue(1)
@maxValue(3)
param capacity int = 1

@description('Addresses allowed to reach the scheduler (IPv4, IPv6 or CIDR). An empty list refuses every caller; every call is still authenticated by Entra ID and authorized by the role below.')
param ipAllowlist array = ['0.0.0.0/0']

@description('Principal ID of the Function App identity, which gets Durable Task Data Contributor on the task hub.')
param functionPrincipalId string

@description('Tags for every resource.')
param tags object = {}

var builtInRoles = loadJsonContent('../../azure-roles.json', '$.roles')
var durableTaskDataContributor = builtInRoles['Durable Task Data Contributor']

resource scheduler 'Microsoft.DurableTask/schedulers@2026-02-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    ipAllowlist: ipAllowlist
    // Capacity is a Dedicated SKU's only: Consumption has none to set.
    sku: skuName == 'Dedicated' ? { name: skuName, capacity: capacity } : { name: skuName }
  }
}

resource taskHub 'Microsoft.DurableTask/schedulers/taskHubs@2026-02-01' = {
  parent: scheduler
  name: taskHubName
}

// The narrowest scope the role can be given at: this task hub, not the scheduler (which would reach
// every task hub in it).
resource functionTaskHub 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(taskHub.id, functionPrincipalId, durableTaskDataContributor)
  scope: taskHub
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', durableTaskDataContributor)
    principalId: functionPrincipalId
    principalType: 'ServicePrincipal'
  }
}

@description('The scheduler\'s endpoint (https://<name>.<region>.durabletask.io), for the connection string.')
output endpoint string = scheduler.properties.endpoint
output schedulerName string = scheduler.name
output taskHubId string = taskHub.id
