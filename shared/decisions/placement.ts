// Where a VM is placed: pinned to one availability zone (zonal) or left to Azure (regional), and the
// zone label a regional node carries.

/** The zone label AKS nodes without an availability zone carry (their fault domain), as in the provider. */
export const REGIONAL_ZONE = '0';

export type PlacementScope = 'zonal' | 'regional';

/** A zonal offering pins the VM to one availability zone; a regional one lets Azure place it anywhere. */
export function placementScopeOf(offering: { zoneNumber?: string }): PlacementScope {
  return offering.zoneNumber === undefined ? 'regional' : 'zonal';
}
