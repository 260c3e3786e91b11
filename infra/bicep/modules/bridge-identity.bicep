// The event bridge's identity: a user-assigned managed identity that trusts the bridge's Kubernetes
// ServiceAccount (infra/k8s/bridge/serviceaccount.yaml) through Microsoft Entra Workload ID. The bridge
// holds no secret; the pod's projected ServiceAccount token is exchanged for an Entra token.

@description('Name of the user-assigned managed identity.')
param name string

@description('Azure region.')
param location string

@description('OIDC issuer URL of the AKS cluster (properties.oidcIssuerProfile.issuerURL).')
param oidcIssuerUrl string

@description('Namespace of the bridge ServiceAccount.')
param serviceAccountNamespace string = 'nodeclaim-system'

@description('Name of the bridge ServiceAccount.')
param serviceAccountName string = 'event-bridge'

@description('Tags for every resource.')
param tags object = {}

resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' = {
  name: name
  location: location
  tags: tags
}

resource federation 'Microsoft.ManagedIdentity/userAssignedIdentities/federatedIdentityCredentials@2023-01-31' = {
  parent: identity
  name: 'event-bridge'
  properties: {
    issuer: oidcIssuerUrl
    subject: 'system:serviceaccount:${serviceAccountNamespace}:${serviceAccountName}'
    audiences: ['api://AzureADTokenExchange']
  }
}

output id string = identity.id
output clientId string = identity.properties.clientId
output principalId string = identity.properties.principalId
