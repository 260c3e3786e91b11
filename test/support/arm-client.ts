// The real @azure/arm-compute client pointed at an ARM emulator, and the VM body tests PUT through it.
import { ComputeManagementClient, type VirtualMachine } from '@azure/arm-compute';
import type { ArmEmulator } from '../../local/arm-emulator/index.js';

type Credential = ConstructorParameters<typeof ComputeManagementClient>[0];
export type ComputeClientOptions = NonNullable<ConstructorParameters<typeof ComputeManagementClient>[2]>;

/** The emulator accepts any bearer token: authentication is the one part of ARM it does not emulate. */
export const fixedTokenCredential: Credential = {
  getToken: async () => ({ token: 'emulator-accepts-any-token', expiresOnTimestamp: Date.now() + 3_600_000 }),
};

/**
 * A compute client for `emulator`. It trusts the emulator's CA through `tlsOptions.ca`, so it does not
 * depend on NODE_EXTRA_CA_CERTS having been set before the worker started.
 */
export function emulatorComputeClient(
  emulator: ArmEmulator,
  subscriptionId: string,
  options: ComputeClientOptions = {},
): ComputeManagementClient {
  return new ComputeManagementClient(fixedTokenCredential, subscriptionId, {
    endpoint: emulator.url,
    tlsOptions: { ca: emulator.caCertPem },
    ...options,
  });
}

export interface LinuxVmInput {
  name: string;
  subscriptionId: string;
  resourceGroup: string;
  location: string;
  zone: string;
  vmSize: string;
  tags: Record<string, string>;
  /** Base64 cloud-init; left out of the body when undefined. */
  customData?: string | undefined;
}

/** An Ubuntu VM with SSH-key login only and one NIC in the resource group's `nodes` subnet. */
export function linuxVmParameters(input: LinuxVmInput): VirtualMachine {
  const { name, subscriptionId, resourceGroup, customData } = input;
  return {
    location: input.location,
    zones: [input.zone],
    tags: input.tags,
    hardwareProfile: { vmSize: input.vmSize },
    storageProfile: {
      imageReference: { publisher: 'Canonical', offer: 'ubuntu-24_04-lts', sku: 'server', version: 'latest' },
      osDisk: {
        createOption: 'FromImage',
        deleteOption: 'Delete',
        managedDisk: { storageAccountType: 'Premium_LRS' },
      },
    },
    osProfile: {
      computerName: name,
      adminUsername: 'azureuser',
      ...(customData !== undefined ? { customData } : {}),
      linuxConfiguration: {
        disablePasswordAuthentication: true,
        ssh: {
          publicKeys: [
            { path: '/home/azureuser/.ssh/authorized_keys', keyData: 'ssh-ed25519 AAAATEST test' },
          ],
        },
      },
    },
    networkProfile: {
      networkApiVersion: '2020-11-01',
      networkInterfaceConfigurations: [
        {
          name: `${name}-nic`,
          primary: true,
          deleteOption: 'Delete',
          ipConfigurations: [
            {
              name: 'ipconfig1',
              subnet: {
                id: `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes`,
              },
            },
          ],
        },
      ],
    },
  };
}
