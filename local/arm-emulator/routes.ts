// Which Microsoft.Compute operation a request addresses. ARM paths are case-insensitive in their
// fixed segments; names keep the caller's case.

import type { RequestKind } from './throttling.js';
import type { VmAddress } from './compute-service.js';

export type ArmRoute =
  | { kind: 'putVm' | 'getVm' | 'deleteVm' | 'restartVm'; address: VmAddress }
  | { kind: 'getCapacityReservationGroup' | 'listCapacityReservations'; group: VmAddress }
  | { kind: 'listVms'; subscriptionId: string; resourceGroup: string | undefined }
  | { kind: 'getOperation'; subscriptionId: string; location: string; operationId: string }
  | { kind: 'listSkus'; subscriptionId: string }
  | {
      kind: 'listUsages' | 'spotPlacementScores' | 'regularPlacementScores';
      subscriptionId: string;
      location: string;
    }
  | {
      kind: 'listGalleryImageVersions';
      subscriptionId: string;
      location: string;
      gallery: string;
      definition: string;
    };

export type RouteMatch = { route: ArmRoute } | { methodNotAllowed: true } | { notFound: true };

const segment = '([^/]+)';
const vmPath = new RegExp(
  `^/subscriptions/${segment}/resourceGroups/${segment}/providers/Microsoft\\.Compute/virtualMachines/${segment}/?$`,
  'i',
);
const vmRestartPath = new RegExp(
  `^/subscriptions/${segment}/resourceGroups/${segment}/providers/Microsoft\\.Compute/virtualMachines/${segment}/restart/?$`,
  'i',
);
const vmListPath = new RegExp(
  `^/subscriptions/${segment}/resourceGroups/${segment}/providers/Microsoft\\.Compute/virtualMachines/?$`,
  'i',
);
const vmListAllPath = new RegExp(
  `^/subscriptions/${segment}/providers/Microsoft\\.Compute/virtualMachines/?$`,
  'i',
);
const operationPath = new RegExp(
  `^/subscriptions/${segment}/providers/Microsoft\\.Compute/locations/${segment}/operations/${segment}/?$`,
  'i',
);
const galleryImageVersionsPath = new RegExp(
  `^/subscriptions/${segment}/providers/Microsoft\\.Compute/locations/${segment}/communityGalleries/${segment}/images/${segment}/versions/?$`,
  'i',
);
const reservationGroupPath = new RegExp(
  `^/subscriptions/${segment}/resourceGroups/${segment}/providers/Microsoft\\.Compute/capacityReservationGroups/${segment}(/capacityReservations)?/?$`,
  'i',
);
const usagesPath = new RegExp(
  `^/subscriptions/${segment}/providers/Microsoft\\.Compute/locations/${segment}/usages/?$`,
  'i',
);
const placementScoresPath = new RegExp(
  `^/subscriptions/${segment}/providers/Microsoft\\.Compute/locations/${segment}/placementScores/(spot|regular)/generate/?$`,
  'i',
);
const skusPath = new RegExp(`^/subscriptions/${segment}/providers/Microsoft\\.Compute/skus/?$`, 'i');

function groups(match: RegExpExecArray): string[] {
  return match.slice(1).map((g) => decodeURIComponent(g ?? ''));
}

export function matchRoute(method: string, pathname: string): RouteMatch {
  let match = vmPath.exec(pathname);
  if (match) {
    const [subscriptionId = '', resourceGroup = '', name = ''] = groups(match);
    const address = { subscriptionId, resourceGroup, name };
    if (method === 'PUT') return { route: { kind: 'putVm', address } };
    if (method === 'GET') return { route: { kind: 'getVm', address } };
    if (method === 'DELETE') return { route: { kind: 'deleteVm', address } };
    return { methodNotAllowed: true };
  }
  match = vmRestartPath.exec(pathname);
  if (match) {
    const [subscriptionId = '', resourceGroup = '', name = ''] = groups(match);
    return method === 'POST'
      ? { route: { kind: 'restartVm', address: { subscriptionId, resourceGroup, name } } }
      : { methodNotAllowed: true };
  }
  match = vmListPath.exec(pathname);
  if (match) {
    const [subscriptionId = '', resourceGroup = ''] = groups(match);
    return method === 'GET'
      ? { route: { kind: 'listVms', subscriptionId, resourceGroup } }
      : { methodNotAllowed: true };
  }
  match = vmListAllPath.exec(pathname);
  if (match) {
    const [subscriptionId = ''] = groups(match);
    return method === 'GET'
      ? { route: { kind: 'listVms', subscriptionId, resourceGroup: undefined } }
      : { methodNotAllowed: true };
  }
  match = operationPath.exec(pathname);
  if (match) {
    const [subscriptionId = '', location = '', operationId = ''] = groups(match);
    return method === 'GET'
      ? { route: { kind: 'getOperation', subscriptionId, location, operationId } }
      : { methodNotAllowed: true };
  }
  match = reservationGroupPath.exec(pathname);
  if (match) {
    const [subscriptionId = '', resourceGroup = '', name = '', reservations] = groups(match);
    const kind = reservations ? 'listCapacityReservations' : 'getCapacityReservationGroup';
    return method === 'GET'
      ? { route: { kind, group: { subscriptionId, resourceGroup, name } } }
      : { methodNotAllowed: true };
  }
  match = skusPath.exec(pathname);
  if (match) {
    const [subscriptionId = ''] = groups(match);
    return method === 'GET' ? { route: { kind: 'listSkus', subscriptionId } } : { methodNotAllowed: true };
  }
  match = usagesPath.exec(pathname);
  if (match) {
    const [subscriptionId = '', location = ''] = groups(match);
    return method === 'GET'
      ? { route: { kind: 'listUsages', subscriptionId, location } }
      : { methodNotAllowed: true };
  }
  match = placementScoresPath.exec(pathname);
  if (match) {
    const [subscriptionId = '', location = '', api = ''] = groups(match);
    const kind = api.toLowerCase() === 'spot' ? 'spotPlacementScores' : 'regularPlacementScores';
    return method === 'POST' ? { route: { kind, subscriptionId, location } } : { methodNotAllowed: true };
  }
  match = galleryImageVersionsPath.exec(pathname);
  if (match) {
    const [subscriptionId = '', location = '', gallery = '', definition = ''] = groups(match);
    return method === 'GET'
      ? { route: { kind: 'listGalleryImageVersions', subscriptionId, location, gallery, definition } }
      : { methodNotAllowed: true };
  }
  return { notFound: true };
}

export function requestKindOf(route: ArmRoute): RequestKind {
  return route.kind;
}

export function subscriptionOf(route: ArmRoute): string {
  if ('address' in route) return route.address.subscriptionId;
  return 'group' in route ? route.group.subscriptionId : route.subscriptionId;
}

export function vmNameOf(route: ArmRoute): string | undefined {
  return 'address' in route ? route.address.name : undefined;
}
