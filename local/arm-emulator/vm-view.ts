// The JSON a virtual machine GET/PUT returns: the request's properties echoed back with the
// defaults and read-only fields Compute adds, and without secrets (customData, adminPassword).

import { isObject, type JsonObject } from './vm-spec.js';
import type { StoredVm } from './vm-store.js';

function clone<T>(value: T): T {
  return structuredClone(value);
}

function renderOsProfile(osProfile: unknown): JsonObject {
  const profile = isObject(osProfile) ? clone(osProfile) : {};
  delete profile.customData;
  delete profile.adminPassword;
  return { secrets: [], allowExtensionOperations: true, requireGuestProvisionSignal: true, ...profile };
}

function renderStorageProfile(vm: StoredVm, storageProfile: unknown): JsonObject {
  const profile = isObject(storageProfile) ? clone(storageProfile) : {};
  const osDisk = isObject(profile.osDisk) ? profile.osDisk : {};
  const managedDisk = isObject(osDisk.managedDisk) ? osDisk.managedDisk : {};
  const diskName = typeof osDisk.name === 'string' ? osDisk.name : vm.osDiskName;
  profile.osDisk = {
    osType: 'Linux',
    createOption: 'FromImage',
    caching: 'ReadWrite',
    deleteOption: 'Detach',
    diskSizeGB: 30,
    ...osDisk,
    name: diskName,
    managedDisk: {
      storageAccountType: 'Premium_LRS',
      ...managedDisk,
      id: `/subscriptions/${vm.subscriptionId}/resourceGroups/${vm.resourceGroup.toUpperCase()}/providers/Microsoft.Compute/disks/${diskName}`,
    },
  };
  if (!Array.isArray(profile.dataDisks)) profile.dataDisks = [];
  return profile;
}

function renderNetworkProfile(vm: StoredVm, networkProfile: unknown): JsonObject {
  const profile = isObject(networkProfile) ? clone(networkProfile) : {};
  const configurations = Array.isArray(profile.networkInterfaceConfigurations)
    ? (profile.networkInterfaceConfigurations as unknown[])
    : [];
  if (configurations.length > 0 && !Array.isArray(profile.networkInterfaces)) {
    // Compute creates one NIC per inline configuration and reports it by reference.
    profile.networkInterfaces = configurations.filter(isObject).map((config) => {
      const props = isObject(config.properties) ? config.properties : {};
      return {
        id: `/subscriptions/${vm.subscriptionId}/resourceGroups/${vm.resourceGroup.toUpperCase()}/providers/Microsoft.Network/networkInterfaces/${String(config.name)}`,
        properties: {
          primary: props.primary ?? configurations.length === 1,
          deleteOption: props.deleteOption ?? 'Detach',
        },
      };
    });
  }
  return profile;
}

/**
 * What `$expand=instanceView` adds: the provisioning state as a status, with the failed operation's code
 * in it (`ProvisioningState/failed/<code>`) and its message, as Compute reports a VM whose creation
 * failed; and the power state once the VM runs.
 */
function renderInstanceView(vm: StoredVm): JsonObject {
  const time = vm.timeCreated;
  const statuses: JsonObject[] = [];
  if (vm.provisioningState === 'Failed') {
    statuses.push({
      code: `ProvisioningState/failed/${vm.failure?.code ?? 'InternalOperationError'}`,
      level: 'Error',
      displayStatus: 'Provisioning failed',
      message: vm.failure?.message ?? 'The operation failed.',
      time,
    });
  } else {
    const state = vm.provisioningState.toLowerCase();
    statuses.push({
      code: `ProvisioningState/${state}`,
      level: 'Info',
      displayStatus: `Provisioning ${state}`,
      time,
    });
  }
  if (vm.powerState === 'deallocated') {
    statuses.push({ code: 'PowerState/deallocated', level: 'Info', displayStatus: 'VM deallocated' });
  } else if (vm.powerState === 'restarting') {
    statuses.push({ code: 'PowerState/starting', level: 'Info', displayStatus: 'VM starting' });
  } else if (vm.provisioningState === 'Succeeded') {
    statuses.push({ code: 'PowerState/running', level: 'Info', displayStatus: 'VM running' });
  }
  return { computerName: vm.spec.computerName, statuses };
}

export function renderVm(vm: StoredVm, options: { instanceView?: boolean } = {}): JsonObject {
  const given = vm.spec.properties;
  const properties: JsonObject = {
    ...clone(given),
    vmId: vm.vmId,
    hardwareProfile: {
      ...(isObject(given.hardwareProfile) ? clone(given.hardwareProfile) : {}),
      vmSize: vm.spec.vmSize,
    },
    storageProfile: renderStorageProfile(vm, given.storageProfile),
    osProfile: renderOsProfile(given.osProfile),
    networkProfile: renderNetworkProfile(vm, given.networkProfile),
    priority: vm.spec.priority,
    provisioningState: vm.provisioningState,
    timeCreated: vm.timeCreated,
  };
  if (vm.spec.evictionPolicy !== undefined) properties.evictionPolicy = vm.spec.evictionPolicy;
  if (options.instanceView) properties.instanceView = renderInstanceView(vm);
  return {
    name: vm.name,
    id: vm.id,
    type: 'Microsoft.Compute/virtualMachines',
    location: vm.spec.location,
    ...(Object.keys(vm.spec.tags).length > 0 ? { tags: { ...vm.spec.tags } } : {}),
    ...(vm.spec.zones.length > 0 ? { zones: [...vm.spec.zones] } : {}),
    properties,
  };
}
