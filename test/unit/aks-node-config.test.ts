// The node's custom data in AgentBaker's AKSNodeConfig contract, and the VM/NIC body, per network mode:
// decoded back from what a launch emits (vmBody), as the node image's aks-node-controller reads it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { VirtualMachine } from '@azure/arm-compute';
import { describe, expect, it } from 'vitest';
import { localClusterSettings } from '../../local/stack/app-settings.js';
import { loadSettings } from '../../shared/config/settings.js';
import {
  AKS_NODE_CONFIG_PATH,
  REQUIRED_MAP_FIELDS,
  REQUIRED_STRING_FIELDS,
  buildAksNodeConfig,
  kubeletRegistration,
  nodeConfigProblems,
  parseNodeCustomData,
  renderNodeCustomData,
  type AksNodeConfig,
} from '../../shared/cloudprovider/azure/decisions/aks-node-config.js';
import { decodeCustomData } from '../../shared/cloudprovider/azure/decisions/bootstrap.js';
import { vmBody } from '../../shared/cloudprovider/vm-body.js';
import { d2sV5Offering } from '../support/offering.js';
import type { NodeClaim } from '../../shared/models/index.js';
import { nodeClass } from '../support/fixtures.js';
import { exampleNodeConfigInput } from '../support/node-config.js';

const fixtures = join(import.meta.dirname, '..', 'fixtures', 'aks-node-config');
const subscriptionId = '00000000-0000-0000-0000-000000000001';
const nodeGroup = 'MC_prod_prod_westus2';

function settingsFor(network: Record<string, string>) {
  return loadSettings({
    ...localClusterSettings(subscriptionId, nodeGroup),
    ...network,
    KUBECONFIG: '/dev/null',
    CLUSTER_NAME: 'prod',
    AZURE_SUBSCRIPTION_ID: subscriptionId,
    AZURE_NODE_RESOURCE_GROUP: nodeGroup,
    AZURE_LOCATION: 'westus2',
    AZURE_SUBNET_ID: `/subscriptions/${subscriptionId}/resourceGroups/prod-net/providers/Microsoft.Network/virtualNetworks/prod-vnet/subnets/nodes`,
    NODE_SSH_PUBLIC_KEY: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHRlc3Q= test',
    BOOTSTRAP_API_SERVER_URL: 'https://prod-dns-abc.hcp.westus2.azmk8s.io:443',
    BOOTSTRAP_CA_CERT: readFileSync(join(fixtures, 'ca.pem'), 'utf8'),
    AzureWebJobsStorage: 'UseDevelopmentStorage=true',
  });
}

const offering = d2sV5Offering({
  vmSize: 'Standard_D4s_v5',
  cpu: 4,
  memoryMiB: 16384,
  hyperVGenerations: ['V1', 'V2'],
});

const nodeClaim: NodeClaim = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodeClaim',
  metadata: {
    name: 'default-x7k2p',
    labels: { 'karpenter.sh/nodepool': 'default', 'node-role.kubernetes.io/infra': '', team: 'blue' },
  },
  spec: {
    nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
    requirements: [],
    taints: [{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }],
    startupTaints: [{ key: 'node.cilium.io/agent-not-ready', value: 'true', effect: 'NoExecute' }],
  },
};

const imageId =
  '/CommunityGalleries/AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2/images/2404gen2containerd/versions/202608.20.0';

function launch(
  network: Record<string, string>,
  maxPods?: number,
): { vm: VirtualMachine; config: AksNodeConfig } {
  const settings = settingsFor(network);
  const aksNodeClass = nodeClass('default', 'Ubuntu');
  if (maxPods !== undefined) aksNodeClass.spec.maxPods = maxPods;
  const vm = vmBody(settings, nodeClaim, offering, undefined, aksNodeClass, {
    imageId,
    osSku: 'Ubuntu2404',
    bootstrapToken: 'k8s0ab.0123456789abcdef',
  });
  const config = parseNodeCustomData(decodeCustomData(vm.osProfile?.customData ?? ''));
  return { vm, config };
}

const poolId = `/subscriptions/${subscriptionId}/resourceGroups/${nodeGroup}/providers/Microsoft.Network/loadBalancers/kubernetes/backendAddressPools/aksOutboundBackendPool`;

describe('AKSNodeConfig per network mode', () => {
  it('Azure CNI overlay: no node CNI, overlay labels, one IP configuration in the outbound pool', () => {
    const { vm, config } = launch({ NETWORK_PLUGIN_MODE: 'overlay', NETWORK_DATAPLANE: 'azure' });
    expect(config.network_config.network_plugin).toBe('NETWORK_PLUGIN_NONE');
    expect(config.kubelet_config.kubelet_node_labels).toMatchObject({
      'kubernetes.azure.com/azure-cni-overlay': 'true',
      'kubernetes.azure.com/podnetwork-type': 'overlay',
      'kubernetes.azure.com/network-subnet': 'nodes',
      'kubernetes.azure.com/cluster': nodeGroup,
    });
    expect(config.kubelet_config.kubelet_node_labels).not.toHaveProperty(
      'kubernetes.azure.com/ebpf-dataplane',
    );
    const nic = vm.networkProfile?.networkInterfaceConfigurations?.[0];
    expect(nic?.ipConfigurations).toEqual([
      {
        name: 'ipconfig1',
        primary: true,
        subnet: { id: expect.stringContaining('/subnets/nodes') },
        loadBalancerBackendAddressPools: [{ id: poolId }],
      },
    ]);
    expect(nic?.networkSecurityGroup).toBeUndefined();
  });

  it('Cilium overlay: no node CNI, overlay labels plus the Cilium dataplane label', () => {
    const { vm, config } = launch({ NETWORK_PLUGIN_MODE: 'overlay', NETWORK_DATAPLANE: 'cilium' });
    expect(config.network_config.network_plugin).toBe('NETWORK_PLUGIN_NONE');
    expect(config.kubelet_config.kubelet_node_labels).toMatchObject({
      'kubernetes.azure.com/azure-cni-overlay': 'true',
      'kubernetes.azure.com/podnetwork-type': 'overlay',
      'kubernetes.azure.com/ebpf-dataplane': 'cilium',
      'kubernetes.azure.com/network-stateless-cni': 'true',
    });
    expect(vm.networkProfile?.networkInterfaceConfigurations?.[0]?.ipConfigurations).toHaveLength(1);
  });

  it('node-subnet: the image installs Azure CNI, and the NIC has maxPods − 1 secondary IP configurations', () => {
    const { vm, config } = launch({ NETWORK_PLUGIN_MODE: '', NETWORK_DATAPLANE: 'azure' }, 30);
    expect(config.network_config.network_plugin).toBe('NETWORK_PLUGIN_AZURE');
    expect(config.kubelet_config.kubelet_flags['--max-pods']).toBe('30');
    expect(config.kubelet_config.kubelet_node_labels).not.toHaveProperty(
      'kubernetes.azure.com/azure-cni-overlay',
    );
    const ipConfigurations = vm.networkProfile?.networkInterfaceConfigurations?.[0]?.ipConfigurations ?? [];
    expect(ipConfigurations).toHaveLength(30);
    expect(ipConfigurations.filter((c) => c.primary)).toHaveLength(1);
    expect(ipConfigurations[0]?.loadBalancerBackendAddressPools).toEqual([{ id: poolId }]);
    // Secondary addresses are pod addresses: they are not load balancer members.
    expect(ipConfigurations.slice(1).every((c) => c.loadBalancerBackendAddressPools === undefined)).toBe(
      true,
    );
    expect(ipConfigurations.map((c) => c.name)).toEqual(
      Array.from({ length: 30 }, (_, i) => `ipconfig${i + 1}`),
    );
  });

  it.each([
    [{ NETWORK_PLUGIN: 'none' }, /network plugin "none" is not supported/],
    [{ NETWORK_PLUGIN_MODE: '', NETWORK_DATAPLANE: 'cilium' }, /Cilium with pod IPs from a subnet/],
    [{ NETWORK_PLUGIN: 'kubenet' }, /NETWORK_PLUGIN is "kubenet": expected one of "azure", "none"/],
  ])('refuses an unsupported network profile %o', (network, message) => {
    expect(() => settingsFor(network)).toThrow(message);
  });
});

describe('the VM as AKS expects it', () => {
  const { vm } = launch({});

  it('computer name = VM name, kubelet identity attached, AKS node image by community gallery ID', () => {
    expect(vm.osProfile?.computerName).toBe('aks-default-x7k2p');
    expect(vm.identity).toEqual({
      type: 'UserAssigned',
      userAssignedIdentities: {
        [`/subscriptions/${subscriptionId}/resourceGroups/${nodeGroup}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/local-agentpool`]:
          {},
      },
    });
    expect(vm.storageProfile?.imageReference).toEqual({ communityGalleryImageId: imageId });
  });

  it('carries its own ownership tags and never an aks-managed-* tag', () => {
    expect(vm.tags).toEqual({
      'karpenter.azure.com_cluster': 'prod',
      'karpenter.sh_nodepool': '',
      'karpenter.sh_nodeclaim': 'default-x7k2p',
    });
  });

  it('attaches the node NSG to the NIC only for a VNet brought by the cluster owner', () => {
    const byo = launch({ ATTACH_NSG_TO_NIC: 'true' }).vm;
    expect(byo.networkProfile?.networkInterfaceConfigurations?.[0]?.networkSecurityGroup).toEqual({
      id: `/subscriptions/${subscriptionId}/resourceGroups/${nodeGroup}/providers/Microsoft.Network/networkSecurityGroups/aks-agentpool-10000000-nsg`,
    });
  });
});

describe('the AKSNodeConfig a launch emits', () => {
  const { config } = launch({});

  it('matches the checked-in fixture field for field', () => {
    const fixture = JSON.parse(readFileSync(join(fixtures, 'cilium-overlay.json'), 'utf8')) as unknown;
    expect(config).toEqual(fixture);
  });

  it.each([...REQUIRED_STRING_FIELDS, ...REQUIRED_MAP_FIELDS])('has the required field %s', (field) => {
    let value: unknown = config;
    for (const part of field.split('.')) value = (value as Record<string, unknown>)[part];
    expect(value).toBeTruthy();
    const without = structuredClone(config) as unknown as Record<string, Record<string, unknown>>;
    const parts = field.split('.');
    let parent: Record<string, unknown> = without;
    for (const part of parts.slice(0, -1)) parent = parent[part] as Record<string, unknown>;
    delete parent[parts.at(-1) as string];
    expect(nodeConfigProblems(without).join('; ')).toContain(field);
  });

  it('keeps node labels apart from kubelet flags, and the flags a join needs', () => {
    const flags = config.kubelet_config.kubelet_flags;
    expect(flags).not.toHaveProperty('--node-labels');
    expect(flags).toMatchObject({
      '--register-with-taints':
        'karpenter.sh/unregistered:NoExecute,dedicated=infra:NoSchedule,node.cilium.io/agent-not-ready=true:NoExecute',
      '--cluster-dns': '10.0.0.10',
      '--cloud-provider': 'external',
      // The reservations launch planned this size's allocatable with (Standard_D4s_v5, Kubernetes 1.34,
      // Azure CNI overlay's 250 pods), so the node enforces what the NodeClaim promised.
      '--max-pods': '250',
      '--kube-reserved': 'cpu=140m,memory=4096Mi',
      '--eviction-hard': 'memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%',
    });
    // kubelet may not set node-role.kubernetes.io/* itself (NodeRestriction); registration copies it later.
    expect(config.kubelet_config.kubelet_node_labels).not.toHaveProperty('node-role.kubernetes.io/infra');
    expect(config.kubelet_config.kubelet_node_labels.team).toBe('blue');
    expect(config.bootstrapping_config.tls_bootstrapping_token).toBe('k8s0ab.0123456789abcdef');
    expect(Buffer.from(config.kubernetes_ca_cert, 'base64').toString()).toContain('BEGIN CERTIFICATE');
  });

  it('decodes AgentBaker-shaped custom data (its own MIME boundary and boothook lines)', () => {
    const text = readFileSync(join(fixtures, 'agentbaker-custom-data.txt'), 'utf8').replace(/\r?\n/g, '\r\n');
    const decoded = parseNodeCustomData(text);
    expect(decoded.api_server_config.api_server_name).toBe('prod-dns-abc.hcp.westus2.azmk8s.io');
    expect(kubeletRegistration(decoded).registerWithTaints).toEqual([
      { key: 'karpenter.sh/unregistered', effect: 'NoExecute' },
    ]);
  });

  it('writes the configuration where aks-node-controller reads it, and refuses custom data without it', () => {
    const text = renderNodeCustomData(buildAksNodeConfig(exampleNodeConfigInput()));
    expect(text).toContain('Content-Type: text/cloud-boothook');
    expect(text).toContain(`base64 -d >${AKS_NODE_CONFIG_PATH}`);
    expect(() => parseNodeCustomData('#cloud-config\n{}')).toThrow(/not MIME multipart/);
    const missing = buildAksNodeConfig(exampleNodeConfigInput({ bootstrapToken: '' }));
    expect(() => parseNodeCustomData(renderNodeCustomData(missing))).toThrow(
      /bootstrapping_config.tls_bootstrapping_token is missing/,
    );
  });
});
