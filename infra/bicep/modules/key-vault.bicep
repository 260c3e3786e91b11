// Holds the Kubernetes bootstrap token that every new node's kubelet uses to join the cluster. The Function
// App reads it through a Key Vault reference (BOOTSTRAP_TOKEN = @Microsoft.KeyVault(...)), so the token is
// never an app setting value, and it is written here through ARM, so no data-plane role is needed to deploy.

@description('Key Vault name (3-24 letters, digits and hyphens, globally unique).')
@minLength(3)
@maxLength(24)
param name string

@description('Azure region.')
param location string

@description('Bootstrap token "<6 chars>.<16 chars>" matching a bootstrap-token Secret in kube-system.')
@secure()
param bootstrapToken string

@description('Name of the secret that holds the bootstrap token.')
param bootstrapTokenSecretName string = 'bootstrap-token'

@description('Purge protection cannot be turned off again; enable it for production vaults.')
param enablePurgeProtection bool = true

@description('Tags for every resource.')
param tags object = {}

resource vault 'Microsoft.KeyVault/vaults@2023-07-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    tenantId: subscription().tenantId
    sku: { family: 'A', name: 'standard' }
    enableRbacAuthorization: true
    enableSoftDelete: true
    softDeleteRetentionInDays: 90
    enablePurgeProtection: enablePurgeProtection ? true : null
    publicNetworkAccess: 'Enabled'
  }
}

resource token 'Microsoft.KeyVault/vaults/secrets@2023-07-01' = {
  parent: vault
  name: bootstrapTokenSecretName
  properties: {
    value: bootstrapToken
    contentType: 'Kubernetes bootstrap token'
  }
}

output id string = vault.id
output name string = vault.name
// Without a version, so a rotated token is picked up by the app (App Service re-reads references).
output bootstrapTokenSecretUri string = '${vault.properties.vaultUri}secrets/${token.name}'
