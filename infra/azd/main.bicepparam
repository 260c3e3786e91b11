// Every value comes from the azd environment; infra/hooks/preprovision.mjs fills in what it can read
// from the cluster (`azd env get-values` shows them). Set the two you must choose yourself first:
//   azd env set AKS_CLUSTER_NAME <cluster>; azd env set AKS_CLUSTER_RESOURCE_GROUP <its resource group>
using 'main.bicep'

param environmentName = readEnvironmentVariable('AZURE_ENV_NAME')
param location = readEnvironmentVariable('AZURE_LOCATION')
param aksClusterName = readEnvironmentVariable('AKS_CLUSTER_NAME')
param aksClusterResourceGroupName = readEnvironmentVariable('AKS_CLUSTER_RESOURCE_GROUP')
param nodeSubnetId = readEnvironmentVariable('NODE_SUBNET_ID')
param nodeSecurityGroupName = readEnvironmentVariable('NODE_SECURITY_GROUP_NAME')
param attachNsgToNic = bool(readEnvironmentVariable('ATTACH_NSG_TO_NIC', 'false'))
param nodeSshPublicKey = readEnvironmentVariable('NODE_SSH_PUBLIC_KEY')
param kubeCaCert = readEnvironmentVariable('KUBE_CA_CERT')
param alertEmail = readEnvironmentVariable('ALERT_EMAIL', '')
param capacityReservationGroupIds = readEnvironmentVariable('CAPACITY_RESERVATION_GROUP_IDS', '')
