// Example parameters: copy, fill in, deploy with
//   az deployment sub create -l westus2 -f infra/bicep/main.bicep -p infra/bicep/main.bicepparam
using 'main.bicep'

param location = 'westus2'
param namePrefix = 'ncprod'
param clusterName = 'prod-aks'
param aksClusterResourceGroupName = 'prod-aks-rg'
param aksClusterName = 'prod-aks'
param nodeResourceGroupName = 'MC_prod-aks-rg_prod-aks_westus2'
param nodeSubnetId = '/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/prod-network-rg/providers/Microsoft.Network/virtualNetworks/prod-vnet/subnets/nodes'
param nodeSshPublicKey = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExampleKeyReplaceMe operator@example'
param nodeSecurityGroupName = 'aks-agentpool-12345678-nsg'
param attachNsgToNic = true
// base64 of the cluster CA: kubectl config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}'
param kubeCaCert = readEnvironmentVariable('KUBE_CA_CERT')
param kubernetesAuthorization = 'KubernetesRBAC'
// The groups node VMs may be launched into; the app is granted read and deploy on these only.
param capacityReservationGroupIds = []
param alertEmail = 'oncall@example.com'
param tags = {
  environment: 'prod'
}
