// Log Analytics + workspace-based Application Insights (local auth off: the app sends telemetry with its
// managed identity), the launch-funnel workbook, and log alerts on the functions' metric records.
// The workbook and alert queries live in infra/monitoring/ and are shared with the Terraform version.

@description('Prefix for resource names.')
param namePrefix string

@description('Azure region.')
param location string

@description('Days Log Analytics keeps data.')
@minValue(30)
@maxValue(730)
param retentionInDays int = 30

@description('E-mail address alerts are sent to; empty creates the alert rules without notifications.')
param alertEmail string = ''

@description('Tags for every resource.')
param tags object = {}

resource workspace 'Microsoft.OperationalInsights/workspaces@2023-09-01' = {
  name: '${namePrefix}-logs'
  location: location
  tags: tags
  properties: {
    sku: { name: 'PerGB2018' }
    retentionInDays: retentionInDays
  }
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' = {
  name: '${namePrefix}-appi'
  location: location
  tags: tags
  kind: 'web'
  properties: {
    Application_Type: 'web'
    WorkspaceResourceId: workspace.id
    IngestionMode: 'LogAnalytics'
    // Only Entra-authenticated telemetry (APPLICATIONINSIGHTS_AUTHENTICATION_STRING) is accepted.
    DisableLocalAuth: true
  }
}

resource workbook 'Microsoft.Insights/workbooks@2023-06-01' = {
  name: guid(resourceGroup().id, appInsights.id, 'nodeclaim-launch-funnel')
  location: location
  tags: tags
  kind: 'shared'
  properties: {
    displayName: 'NodeClaim launch funnel (${namePrefix})'
    category: 'workbook'
    version: '1.0'
    sourceId: appInsights.id
    serializedData: loadTextContent('../../monitoring/workbook.json')
  }
}

resource actionGroup 'Microsoft.Insights/actionGroups@2023-01-01' = if (!empty(alertEmail)) {
  name: '${namePrefix}-alerts'
  location: 'global'
  tags: tags
  properties: {
    groupShortName: 'nodeclaims'
    enabled: true
    emailReceivers: [
      {
        name: 'operators'
        emailAddress: alertEmail
        useCommonAlertSchema: true
      }
    ]
  }
}

var alertActions = empty(alertEmail) ? [] : [actionGroup.id]

// One log alert per concern; each query returns rows only when something is wrong.
var alerts = [
  {
    name: 'launch-failure-rate'
    displayName: 'NodeClaim launch failure rate above 20%'
    description: 'More than 20% of the VM launches of a NodePool failed in the last 30 minutes (at least 5 attempts). See the workbook\'s failures by reason.'
    severity: 2
    window: 'PT30M'
    query: loadTextContent('../../monitoring/alerts/launch-failure-rate.kql')
    dimension: 'nodepool'
  }
  {
    name: 'registration-timeouts'
    displayName: 'NodeClaims deleted after registration timeout'
    description: 'A NodeClaim\'s VM was created but its Node never registered, so the NodeClaim was deleted. Check bootstrap data, the bootstrap token, node networking and the image.'
    severity: 2
    window: 'PT15M'
    query: loadTextContent('../../monitoring/alerts/registration-timeouts.kql')
    dimension: 'nodepool'
  }
  {
    name: 'poison-queue-messages'
    displayName: 'NodeClaim event messages moved to the poison queue'
    description: 'The objectEvents function failed on a bridge message maxDequeueCount times and the host moved it to the poison queue. Inspect the message and the function\'s errors.'
    severity: 3
    window: 'PT15M'
    query: loadTextContent('../../monitoring/alerts/poison-queue-messages.kql')
    dimension: 'queue'
  }
]

resource alertRules 'Microsoft.Insights/scheduledQueryRules@2022-06-15' = [
  for alert in alerts: {
    name: '${namePrefix}-${alert.name}'
    location: location
    tags: tags
    properties: {
      displayName: alert.displayName
      description: alert.description
      severity: alert.severity
      enabled: true
      scopes: [appInsights.id]
      evaluationFrequency: 'PT5M'
      windowSize: alert.window
      criteria: {
        allOf: [
          {
            query: alert.query
            timeAggregation: 'Count'
            operator: 'GreaterThan'
            threshold: 0
            dimensions: [
              {
                name: alert.dimension
                operator: 'Include'
                values: ['*']
              }
            ]
            failingPeriods: {
              numberOfEvaluationPeriods: 1
              minFailingPeriodsToAlert: 1
            }
          }
        ]
      }
      autoMitigate: true
      actions: {
        actionGroups: alertActions
      }
    }
  }
]

output appInsightsId string = appInsights.id
output appInsightsName string = appInsights.name
output appInsightsConnectionString string = appInsights.properties.ConnectionString
output workspaceId string = workspace.id
output workbookId string = workbook.id
