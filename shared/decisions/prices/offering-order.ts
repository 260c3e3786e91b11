// The order launch tries offerings in once prices are known, as the Azure provider's allocation
// strategy ranks them (stages/offering_rank.go): lowest price first; at equal price spot before
// on-demand, then zonal before regional. Unlike the provider, which shuffles ties to spread zones,
// ties end on the smaller machine, then size name and zone, so the choice is reproducible. Unknown
// prices sort last, and among themselves in that same tie order, so a size missing from the price
// table is still tried smallest first rather than by name. Given a likelihood (a rank from the cloud's
// placement scores, lower more likely), equally priced offerings of one capacity type and placement are
// tried most likely first before those tie-breaks: the cheapest is never passed over for it.
import type { CapacityType } from '../../models/karpenter.js';
import type { Offering } from '../offerings.js';
import { placementScopeOf } from '../placement.js';

export type OfferingPrice = (offering: Offering) => number | undefined;

export function compareOfferingsByPrice(
  priceOfOffering: OfferingPrice,
  likelihoodRank?: (offering: Offering) => number,
): (a: Offering, b: Offering) => number {
  return (a, b) => {
    const pa = priceOfOffering(a) ?? Infinity;
    const pb = priceOfOffering(b) ?? Infinity;
    if (pa !== pb) return pa < pb ? -1 : 1;
    if (a.capacityType !== b.capacityType)
      return CAPACITY_ORDER[a.capacityType] - CAPACITY_ORDER[b.capacityType];
    const zonalA = placementScopeOf(a) === 'zonal';
    const zonalB = placementScopeOf(b) === 'zonal';
    if (zonalA !== zonalB) return zonalA ? -1 : 1;
    if (likelihoodRank) {
      const byLikelihood = likelihoodRank(a) - likelihoodRank(b);
      if (byLikelihood !== 0) return byLikelihood;
    }
    return (
      a.cpu - b.cpu || a.memoryMiB - b.memoryMiB || ordinal(a.vmSize, b.vmSize) || ordinal(a.zone, b.zone)
    );
  };
}

// Reserved capacity is paid for already; spot is the cheaper price for the same machine.
const CAPACITY_ORDER: Record<CapacityType, number> = { reserved: 0, spot: 1, 'on-demand': 2 };

function ordinal(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
