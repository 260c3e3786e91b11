// The container registry the event bridge image is built into (`az acr build`, by the azd hook), and
// AcrPull for the cluster's kubelet identity so the bridge Deployment can pull it. Admin user off.

@description('Registry name (5-50 letters and digits, globally unique).')
param name string

@description('Region.')
param location string

@description('Object ID of the AKS cluster\'s kubelet identity, which pulls the image.')
param kubeletPrincipalId string

@description('Tags.')
param tags object = {}

var acrPull = loadJsonContent('../../azure-roles.json', '$.roles')['AcrPull']

resource registry 'Microsoft.ContainerRegistry/registries@2023-07-01' = {
  name: name
  location: location
  tags: tags
  sku: {
    name: 'Basic'
  }
  properties: {
    adminUserEnabled: false
  }
}

resource kubeletPull 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(registry.id, kubeletPrincipalId, acrPull)
  scope: registry
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', acrPull)
    principalId: kubeletPrincipalId
    principalType: 'ServicePrincipal'
  }
}

output name string = registry.name
output loginServer string = registry.properties.loginServer
