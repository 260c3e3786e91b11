// The order launch should try offerings in once prices are known, as the Azure provider's allocation
// strategy ranks them (stages/offering_rank.go): lowest price first; at equal price spot before
// on-demand, then zonal before regional. Unlike the provider, which shuffles ties to spread zones,
// ties end on size name and zone so the choice is reproducible; unknown prices sort last.
import type { Offering } from '../offerings.js';

export type OfferingPrice = (offering: Offering) => number | undefined;

export function compareOfferingsByPrice(
  priceOfOffering: OfferingPrice,
): (a: Offering, b: Offering) => number {
  return (a, b) => {
    const pa = priceOfOffering(a) ?? Infinity;
    const pb = priceOfOffering(b) ?? Infinity;
    if (pa !== pb) return pa < pb ? -1 : 1;
    if (a.capacityType !== b.capacityType) return a.capacityType === 'spot' ? -1 : 1;
    const zonalA = a.zone !== '';
    const zonalB = b.zone !== '';
    if (zonalA !== zonalB) return zonalA ? -1 : 1;
    return ordinal(a.vmSize, b.vmSize) || ordinal(a.zone, b.zone);
  };
}

function ordinal(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
