// Azure RBAC as ARM enforces it, for the one identity the emulator serves: every request's action is
// checked at its scope against the identity's role assignments (AuthorizationFailed, 403), and a VM PUT
// or DELETE is also checked for what it references or creates alongside (LinkedAuthorizationFailed,
// 403): the subnet, load balancer pools and NSG its NICs join, the NIC and OS disk it creates, the
// user-assigned identities it assigns, a gallery image, a disk encryption set, a capacity reservation
// group. An assignment grants its role's actions at its scope and every scope below it; `*` in an action
// matches any run of characters, as in role definitions. Only Microsoft.Compute routes exist here; the
// actions of the other providers are checked as linked access only.
import { ArmError } from './errors.js';
import type { ArmRoute } from './routes.js';
import { isObject } from './vm-spec.js';

export interface RoleAssignment {
  /** For messages only. */
  roleName: string;
  actions: readonly string[];
  notActions?: readonly string[];
  /** /subscriptions/…, /subscriptions/…/resourceGroups/…, or a resource ID. */
  scope: string;
}

export interface AuthorizationSettings {
  /** The object ID ARM names in its messages (the Function App identity's principal ID). */
  principalId: string;
  assignments: readonly RoleAssignment[];
}

export interface Access {
  action: string;
  scope: string;
}

function pattern(action: string): RegExp {
  const escaped = action.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\/]/g, '\\$&'));
  return new RegExp(`^${escaped.join('.*')}$`, 'i');
}

/**
 * `scope` is `assigned` or lies below it (segment-wise, case-insensitive as ARM IDs are). An assignment
 * must name a scope: an empty one (a setting left unset) grants nothing rather than everything.
 */
function within(scope: string, assigned: string): boolean {
  const a = assigned.replace(/\/+$/, '').toLowerCase();
  if (!/^\/subscriptions\/[^/]+/.test(a)) return false;
  const s = scope.replace(/\/+$/, '').toLowerCase();
  return s === a || s.startsWith(`${a}/`);
}

export function isAllowed(assignments: readonly RoleAssignment[], access: Access): boolean {
  return assignments.some(
    (assignment) =>
      within(access.scope, assignment.scope) &&
      assignment.actions.some((action) => pattern(action).test(access.action)) &&
      !(assignment.notActions ?? []).some((action) => pattern(action).test(access.action)),
  );
}

const compute = (subscriptionId: string, resourceGroup: string): string =>
  `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/providers/Microsoft.Compute`;

/** The action a request performs and the scope it performs it at. */
export function requestAccess(method: string, route: ArmRoute): Access {
  switch (route.kind) {
    case 'putVm':
    case 'getVm':
    case 'deleteVm': {
      const { subscriptionId, resourceGroup, name } = route.address;
      const verb = method === 'PUT' ? 'write' : method === 'DELETE' ? 'delete' : 'read';
      return {
        action: `Microsoft.Compute/virtualMachines/${verb}`,
        scope: `${compute(subscriptionId, resourceGroup)}/virtualMachines/${name}`,
      };
    }
    case 'restartVm': {
      const { subscriptionId, resourceGroup, name } = route.address;
      return {
        action: 'Microsoft.Compute/virtualMachines/restart/action',
        scope: `${compute(subscriptionId, resourceGroup)}/virtualMachines/${name}`,
      };
    }
    case 'listVms':
      return {
        action: 'Microsoft.Compute/virtualMachines/read',
        scope:
          route.resourceGroup === undefined
            ? `/subscriptions/${route.subscriptionId}`
            : `/subscriptions/${route.subscriptionId}/resourceGroups/${route.resourceGroup}`,
      };
    case 'getOperation':
      return {
        action: 'Microsoft.Compute/locations/operations/read',
        scope: `/subscriptions/${route.subscriptionId}/providers/Microsoft.Compute/locations/${route.location}/operations/${route.operationId}`,
      };
    case 'listSkus':
      return { action: 'Microsoft.Compute/skus/read', scope: `/subscriptions/${route.subscriptionId}` };
    case 'getCapacityReservationGroup':
    case 'listCapacityReservations': {
      const { subscriptionId, resourceGroup, name } = route.group;
      const group = `${compute(subscriptionId, resourceGroup)}/capacityReservationGroups/${name}`;
      return route.kind === 'getCapacityReservationGroup'
        ? { action: 'Microsoft.Compute/capacityReservationGroups/read', scope: group }
        : {
            action: 'Microsoft.Compute/capacityReservationGroups/capacityReservations/read',
            scope: `${group}/capacityReservations`,
          };
    }
    case 'listUsages':
      return {
        action: 'Microsoft.Compute/locations/usages/read',
        scope: `/subscriptions/${route.subscriptionId}/providers/Microsoft.Compute/locations/${route.location}`,
      };
    // The regular API's action is assumed from its resource type, the same as the spot API's.
    case 'spotPlacementScores':
    case 'regularPlacementScores':
      return {
        action: 'Microsoft.Compute/locations/placementScores/generate/action',
        scope: `/subscriptions/${route.subscriptionId}/providers/Microsoft.Compute/locations/${route.location}`,
      };
    case 'listGalleryImageVersions':
      return {
        action: 'Microsoft.Compute/locations/communityGalleries/images/versions/read',
        scope: `/subscriptions/${route.subscriptionId}/providers/Microsoft.Compute/locations/${route.location}/communityGalleries/${route.gallery}/images/${route.definition}`,
      };
  }
}

const idOf = (value: unknown): string | undefined =>
  isObject(value) && typeof value.id === 'string' ? value.id : undefined;
const arrayOf = (value: unknown): unknown[] => (Array.isArray(value) ? (value as unknown[]) : []);
const propertiesOf = (value: unknown): Record<string, unknown> =>
  isObject(value) && isObject(value.properties) ? value.properties : {};

/**
 * What a VM PUT body references or creates alongside the VM, each with the action Azure checks on it.
 * Existing resources are joined, assigned or read; the VM-managed NICs and the OS disk are created in
 * the VM's resource group.
 */
export function linkedAccessOfVmPut(
  address: { subscriptionId: string; resourceGroup: string; name: string },
  body: unknown,
): Access[] {
  if (!isObject(body)) return [];
  const linked: Access[] = [];
  const add = (action: string, scope: string | undefined): void => {
    if (scope) linked.push({ action, scope });
  };
  const properties = propertiesOf(body);
  const group = `/subscriptions/${address.subscriptionId}/resourceGroups/${address.resourceGroup}/providers`;

  const networkProfile = isObject(properties.networkProfile) ? properties.networkProfile : {};
  for (const nic of arrayOf(networkProfile.networkInterfaces)) {
    add('Microsoft.Network/networkInterfaces/join/action', idOf(nic));
  }
  for (const nic of arrayOf(networkProfile.networkInterfaceConfigurations)) {
    const nicName = isObject(nic) && typeof nic.name === 'string' ? nic.name : address.name;
    const nicId = `${group}/Microsoft.Network/networkInterfaces/${nicName}`;
    add('Microsoft.Network/networkInterfaces/write', nicId);
    add('Microsoft.Network/networkInterfaces/join/action', nicId);
    const nicProperties = propertiesOf(nic);
    add('Microsoft.Network/networkSecurityGroups/join/action', idOf(nicProperties.networkSecurityGroup));
    for (const ipConfiguration of arrayOf(nicProperties.ipConfigurations)) {
      const ipProperties = propertiesOf(ipConfiguration);
      add('Microsoft.Network/virtualNetworks/subnets/join/action', idOf(ipProperties.subnet));
      for (const pool of arrayOf(ipProperties.loadBalancerBackendAddressPools))
        add('Microsoft.Network/loadBalancers/backendAddressPools/join/action', idOf(pool));
    }
  }

  const storageProfile = isObject(properties.storageProfile) ? properties.storageProfile : {};
  const osDisk = isObject(storageProfile.osDisk) ? storageProfile.osDisk : {};
  const diskName = typeof osDisk.name === 'string' ? osDisk.name : `${address.name}_OsDisk`;
  add('Microsoft.Compute/disks/write', `${group}/Microsoft.Compute/disks/${diskName}`);
  const managedDisk = isObject(osDisk.managedDisk) ? osDisk.managedDisk : {};
  add('Microsoft.Compute/diskEncryptionSets/read', idOf(managedDisk.diskEncryptionSet));
  // A community gallery image is public (its ID is not an ARM resource ID); an image in a gallery of the
  // subscription is read by the caller.
  const imageId = idOf(storageProfile.imageReference);
  if (imageId && /\/providers\/Microsoft\.Compute\/galleries\//i.test(imageId))
    add('Microsoft.Compute/galleries/images/versions/read', imageId);

  const identity = isObject(body.identity) ? body.identity : {};
  const identities = isObject(identity.userAssignedIdentities) ? identity.userAssignedIdentities : {};
  for (const id of Object.keys(identities))
    add('Microsoft.ManagedIdentity/userAssignedIdentities/assign/action', id);

  const reservation = isObject(properties.capacityReservation) ? properties.capacityReservation : {};
  add(
    'Microsoft.Compute/capacityReservationGroups/deploy/action',
    idOf(reservation.capacityReservationGroup),
  );
  return linked;
}

/** A VM DELETE also deletes the NICs and the OS disk it created with deleteOption Delete. */
export function linkedAccessOfVmDelete(
  address: { subscriptionId: string; resourceGroup: string; name: string },
  vm: { properties: unknown; osDiskName: string },
): Access[] {
  const group = `/subscriptions/${address.subscriptionId}/resourceGroups/${address.resourceGroup}/providers`;
  const properties = isObject(vm.properties) ? vm.properties : {};
  const linked: Access[] = [];
  const networkProfile = isObject(properties.networkProfile) ? properties.networkProfile : {};
  for (const nic of arrayOf(networkProfile.networkInterfaceConfigurations)) {
    if (propertiesOf(nic).deleteOption !== 'Delete') continue;
    const nicName = isObject(nic) && typeof nic.name === 'string' ? nic.name : address.name;
    linked.push({
      action: 'Microsoft.Network/networkInterfaces/delete',
      scope: `${group}/Microsoft.Network/networkInterfaces/${nicName}`,
    });
  }
  const storageProfile = isObject(properties.storageProfile) ? properties.storageProfile : {};
  const osDisk = isObject(storageProfile.osDisk) ? storageProfile.osDisk : {};
  if (osDisk.deleteOption === 'Delete')
    linked.push({
      action: 'Microsoft.Compute/disks/delete',
      scope: `${group}/Microsoft.Compute/disks/${vm.osDiskName}`,
    });
  return linked;
}

function client(principalId: string): string {
  return `The client '${principalId}' with object id '${principalId}'`;
}

export function authorizationFailed(principalId: string, access: Access): ArmError {
  return new ArmError(
    403,
    'AuthorizationFailed',
    `${client(principalId)} does not have authorization to perform action '${access.action}' over scope '${access.scope}' or the scope is invalid. If access was recently granted, please refresh your credentials.`,
  );
}

export function linkedAuthorizationFailed(
  principalId: string,
  access: Access,
  missing: readonly Access[],
): ArmError {
  return new ArmError(
    403,
    'LinkedAuthorizationFailed',
    `${client(principalId)} has permission to perform action '${access.action}' on scope '${access.scope}'; however, it does not have permission to perform action(s) '${missing.map((m) => m.action).join(',')}' on the linked scope(s) '${missing.map((m) => m.scope).join(',')}' (respectively) or the linked scope(s) are invalid.`,
  );
}

/** Throws ARM's 403 when the request, or what it links, is not allowed. */
export function authorize(settings: AuthorizationSettings, access: Access, linked: readonly Access[]): void {
  if (!isAllowed(settings.assignments, access)) throw authorizationFailed(settings.principalId, access);
  const missing = linked.filter((link) => !isAllowed(settings.assignments, link));
  if (missing.length > 0) throw linkedAuthorizationFailed(settings.principalId, access, missing);
}
