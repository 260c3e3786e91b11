// What the day's nodes cost and what the pods' requests would cost at best, from the prices the ARM
// emulator serves (the shipped on-demand table, spot at the emulator's fixed fraction) and its SKU
// catalog. Pure.
import { staticOnDemandPrices } from '../../../shared/decisions/prices/static-prices.js';
import { SPOT_FRACTION } from '../../arm-emulator/retail-prices.js';
import { capabilityValue, skuCatalog, skuVcpus } from '../../arm-emulator/sku-catalog.js';
import { priceLowerBound, type PricedSize } from '../price-lower-bound.js';
import type { PoolPlan } from './plan.js';

export const DAY_REGION = 'westus2';

/** USD per hour of one VM, by its size and ARM priority (Regular, Spot). */
export function vmHourlyPrice(vmSize: string, priority: string | undefined): number {
  const onDemand = staticOnDemandPrices[DAY_REGION]?.[vmSize] ?? 0;
  return priority === 'Spot' ? onDemand * SPOT_FRACTION : onDemand;
}

/**
 * The sizes a pool may launch, priced at the cheapest capacity type it allows. Raw vCPUs and memory, not
 * allocatable: the bound is then a little lower than any real packing could reach.
 */
export function poolSizes(pool: PoolPlan): PricedSize[] {
  const arch = pool.arch === 'arm64' ? 'Arm64' : 'x64';
  const family = new RegExp(`^Standard_(${pool.families.join('|')})\\d`);
  return skuCatalog
    .filter(
      (sku) =>
        sku.locations.includes(DAY_REGION) &&
        family.test(sku.name) &&
        capabilityValue(sku, 'CpuArchitectureType') === arch &&
        skuVcpus(sku) < pool.cpuBelow &&
        staticOnDemandPrices[DAY_REGION]?.[sku.name] !== undefined,
    )
    .map((sku) => ({
      price: vmHourlyPrice(sku.name, pool.capacityTypes.includes('spot') ? 'Spot' : 'Regular'),
      cpu: skuVcpus(sku),
      memoryGiB: Number(capabilityValue(sku, 'MemoryGB') ?? '0'),
    }));
}

/** What one pool's pods ask for at a moment: their requests, and the nodes they need at least. */
export interface PoolDemand {
  cpu: number;
  memoryGiB: number;
  /** The fewest nodes that can hold them (minimumNodes). */
  nodes: number;
}

/**
 * The fewest nodes a pool's pods fit on, whatever the sizes: one for any pod, and for a set spread over
 * the zones with maxSkew 1 and DoNotSchedule, a node in each zone its pods reach (min(pods, zones)).
 * Without it the bound of a quiet night (a few small pods that must still sit in three zones) is a
 * fraction of one node's price, and the ratio measures the bound's looseness, not waste.
 */
export function minimumNodes(sets: readonly { pods: number; zoneSpread: boolean }[], zones: number): number {
  let nodes = 0;
  for (const set of sets) {
    if (set.pods <= 0) continue;
    nodes = Math.max(nodes, set.zoneSpread ? Math.min(set.pods, zones) : 1);
  }
  return nodes;
}

/** The lower bound of the requests of each pool, summed. */
export function requestsLowerBound(
  pools: readonly PoolPlan[],
  demand: ReadonlyMap<string, PoolDemand>,
): number {
  let total = 0;
  for (const pool of pools) {
    const wanted = demand.get(pool.name);
    if (!wanted || (wanted.cpu === 0 && wanted.memoryGiB === 0)) continue;
    total += priceLowerBound(poolSizes(pool), wanted);
  }
  return total;
}
