// An AKS cluster's node inputs and one node's AKSNodeConfig, for tests that need custom data a real
// launch would send without running a launch.
import {
  buildAksNodeConfig,
  renderNodeCustomData,
  type ClusterNodeInputs,
  type NodeConfigInput,
} from '../../shared/cloudprovider/azure/decisions/aks-node-config.js';
import { encodeCustomData } from '../../shared/cloudprovider/azure/decisions/bootstrap.js';
import type { NetworkModeName } from '../../shared/cloudprovider/azure/decisions/network-mode.js';
import { kubeletReservationFlags, nodeReservations } from '../../shared/decisions/node-reservations.js';

const TEST_CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2\n-----END CERTIFICATE-----\n';

function exampleCluster(networkMode: NetworkModeName = 'cilium-overlay'): ClusterNodeInputs {
  return {
    subscriptionId: '00000000-0000-0000-0000-000000000001',
    tenantId: '00000000-0000-0000-0000-0000000000aa',
    location: 'westus2',
    nodeResourceGroup: 'MC_prod_prod_westus2',
    kubernetesVersion: '1.34.4',
    apiServerName: 'prod-dns-abc.hcp.westus2.azmk8s.io',
    caCertPem: TEST_CA_PEM,
    networkMode,
    dnsServiceIp: '10.0.0.10',
    vnetName: 'aks-vnet-10000000',
    vnetResourceGroup: 'MC_prod_prod_westus2',
    subnetName: 'aks-subnet',
    vnetGuid: '00000000-0000-0000-0000-0000000000bb',
    securityGroupName: 'aks-agentpool-10000000-nsg',
    routeTableName: 'aks-agentpool-10000000-routetable',
    kubeletIdentityClientId: '00000000-0000-0000-0000-0000000000cc',
  };
}

export function exampleNodeConfigInput(overrides: Partial<NodeConfigInput> = {}): NodeConfigInput {
  return {
    cluster: exampleCluster(),
    vmSize: 'Standard_D4s_v5',
    osSku: 'Ubuntu2404',
    adminUsername: 'azureuser',
    bootstrapToken: 'abcdef.0123456789abcdef',
    registerWithTaints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }],
    nodeLabels: { 'karpenter.sh/nodepool': 'default' },
    reservations: kubeletReservationFlags(nodeReservations({ cpu: 4, memoryMiB: 16384 }, { maxPods: 110 })),
    ...overrides,
  };
}

/** Base64 custom data carrying the AKSNodeConfig of `input`, as a launch sends it. */
export function nodeCustomData(input: NodeConfigInput): string {
  return encodeCustomData(renderNodeCustomData(buildAksNodeConfig(input)));
}
