import { describe, expect, it } from 'vitest';
import type { VirtualMachine } from '@azure/arm-compute';
import { d2sV5Offering } from '../support/offering.js';
import {
  MAX_VM_NAME_LENGTH,
  VmTags,
  buildVirtualMachine,
  parseProviderId,
  providerIdFor,
  vmNameFor,
  type VirtualMachineInput,
} from '../../shared/cloudprovider/azure/decisions/vm-spec.js';

const VALID_VM_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

describe('vmNameFor', () => {
  it('prefixes a plain NodeClaim name', () => {
    expect(vmNameFor('default-x7k2p')).toBe('aks-default-x7k2p');
  });

  it.each([
    'Default-X7K2P',
    'pool.with.dots-abcde',
    'a'.repeat(61),
    `${'very-long-nodepool-name-'.repeat(5)}abcde`,
    'ends-with-dash-',
    '...',
  ])('%s → a valid, deterministic, hashed name', (name) => {
    const vmName = vmNameFor(name);
    expect(vmName.length).toBeLessThanOrEqual(MAX_VM_NAME_LENGTH);
    expect(vmName).toMatch(VALID_VM_NAME);
    expect(vmName.startsWith('aks-')).toBe(true);
    expect(vmName).toMatch(/-[0-9a-f]{8}$/);
    expect(vmNameFor(name)).toBe(vmName);
  });

  it('keeps distinct NodeClaims distinct after sanitizing and shortening', () => {
    expect(vmNameFor('pool.a-x')).not.toBe(vmNameFor('pool-a-x'));
    const long = 'n'.repeat(70);
    expect(vmNameFor(`${long}-1`)).not.toBe(vmNameFor(`${long}-2`));
  });

  it('keeps a name of exactly the limit unhashed', () => {
    const name = 'b'.repeat(MAX_VM_NAME_LENGTH - 4);
    expect(vmNameFor(name)).toBe(`aks-${name}`);
  });
});

describe('provider IDs', () => {
  it('lower-cases the resource group only', () => {
    const id = providerIdFor({
      subscriptionId: 'SUB-1',
      resourceGroup: 'MC_rg_Cluster_westus2',
      vmName: 'aks-a',
    });
    expect(id).toBe(
      'azure:///subscriptions/SUB-1/resourceGroups/mc_rg_cluster_westus2/providers/Microsoft.Compute/virtualMachines/aks-a',
    );
    expect(parseProviderId(id)).toEqual({
      subscriptionId: 'SUB-1',
      resourceGroup: 'mc_rg_cluster_westus2',
      vmName: 'aks-a',
    });
  });

  it.each([
    'azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/ss/virtualMachines/0',
    'aws:///us-east-1a/i-123',
    '',
  ])('rejects %s', (id) => {
    expect(parseProviderId(id)).toBeUndefined();
  });

  it('accepts the casing variations ARM returns', () => {
    expect(
      parseProviderId(
        'azure:///subscriptions/s/resourcegroups/rg/providers/microsoft.compute/virtualmachines/vm',
      ),
    ).toEqual({ subscriptionId: 's', resourceGroup: 'rg', vmName: 'vm' });
  });
});

const offering = d2sV5Offering({ zone: 'westus2-2', zoneNumber: '2' });

const imageId =
  '/CommunityGalleries/AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2/images/2404gen2containerd/versions/202608.20.0';
const kubeletIdentity =
  '/subscriptions/s/resourceGroups/MC_rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/kubelet';

const subnetId =
  '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes';

function vmInput(overrides: Partial<VirtualMachineInput> = {}): VirtualMachineInput {
  return {
    location: 'westus2',
    clusterName: 'prod',
    nodePoolName: 'default',
    nodeClaimName: 'default-x7k2p',
    offering,
    imageId,
    subnetId,
    customData: 'I2Nsb3VkLWNvbmZpZw==',
    sshPublicKey: 'ssh-ed25519 AAAA test',
    adminUsername: 'azureuser',
    kubeletIdentityResourceId: kubeletIdentity,
    loadBalancerBackendPoolIds: [],
    ipConfigurationCount: 1,
    ...overrides,
  };
}

describe('buildVirtualMachine', () => {
  it('builds a Regular VM with inline NIC and OS disk that are deleted with it', () => {
    const expected: VirtualMachine = {
      location: 'westus2',
      tags: {
        'karpenter.azure.com_cluster': 'prod',
        'karpenter.sh_nodepool': 'default',
        'karpenter.sh_nodeclaim': 'default-x7k2p',
      },
      identity: { type: 'UserAssigned', userAssignedIdentities: { [kubeletIdentity]: {} } },
      zones: ['2'],
      hardwareProfile: { vmSize: 'Standard_D2s_v5' },
      priority: 'Regular',
      storageProfile: {
        imageReference: { communityGalleryImageId: imageId },
        osDisk: {
          name: 'aks-default-x7k2p-osdisk',
          osType: 'Linux',
          createOption: 'FromImage',
          caching: 'ReadWrite',
          deleteOption: 'Delete',
          diskSizeGB: 128,
          managedDisk: { storageAccountType: 'Premium_LRS' },
        },
      },
      networkProfile: {
        networkApiVersion: '2020-11-01',
        networkInterfaceConfigurations: [
          {
            name: 'aks-default-x7k2p-nic',
            primary: true,
            deleteOption: 'Delete',
            enableAcceleratedNetworking: true,
            enableIPForwarding: false,
            ipConfigurations: [{ name: 'ipconfig1', primary: true, subnet: { id: subnetId } }],
          },
        ],
      },
      osProfile: {
        computerName: 'aks-default-x7k2p',
        adminUsername: 'azureuser',
        customData: 'I2Nsb3VkLWNvbmZpZw==',
        linuxConfiguration: {
          disablePasswordAuthentication: true,
          ssh: {
            publicKeys: [{ path: '/home/azureuser/.ssh/authorized_keys', keyData: 'ssh-ed25519 AAAA test' }],
          },
        },
      },
    };
    expect(buildVirtualMachine(vmInput())).toEqual(expected);
  });

  it('builds a Spot VM that is deleted on eviction at any price', () => {
    const vm = buildVirtualMachine(vmInput({ offering: { ...offering, capacityType: 'spot' } }));
    expect(vm).toMatchObject({
      priority: 'Spot',
      evictionPolicy: 'Delete',
      billingProfile: { maxPrice: -1 },
    });
  });

  it('omits zones in a region without availability zones', () => {
    const { zoneNumber: _zoneNumber, ...regional } = offering;
    const vm = buildVirtualMachine(vmInput({ offering: { ...regional, zone: '' } }));
    expect(vm).not.toHaveProperty('zones');
  });

  it('uses the disk size and disk type the inputs ask for', () => {
    const vm = buildVirtualMachine(
      vmInput({
        osDiskSizeGB: 64,
        offering: { ...offering, arch: 'arm64', premiumIO: false, acceleratedNetworking: false },
      }),
    );
    expect(vm.storageProfile?.osDisk?.diskSizeGB).toBe(64);
    expect(vm.storageProfile?.osDisk?.managedDisk?.storageAccountType).toBe('StandardSSD_LRS');
    expect(vm.networkProfile?.networkInterfaceConfigurations?.[0]?.enableAcceleratedNetworking).toBe(false);
  });

  it('merges extra tags but never lets them override the system tags', () => {
    const vm = buildVirtualMachine(
      vmInput({
        extraTags: {
          team: 'infra',
          'example.com/owner': 'payments',
          [VmTags.nodeClaim]: 'spoofed',
          [VmTags.cluster]: 'other',
          'aks-managed-poolName': 'nodepool1',
        },
      }),
    );
    expect(vm.tags).toEqual({
      team: 'infra',
      'example.com_owner': 'payments',
      'karpenter.azure.com_cluster': 'prod',
      'karpenter.sh_nodepool': 'default',
      'karpenter.sh_nodeclaim': 'default-x7k2p',
    });
    expect(Object.keys(vm.tags ?? {}).every((name) => !name.includes('/'))).toBe(true);
  });
});
