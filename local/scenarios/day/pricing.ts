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

/** The lower bound of the requests of each pool, summed. */
export function requestsLowerBound(
  pools: readonly PoolPlan[],
  demand: ReadonlyMap<string, { cpu: number; memoryGiB: number }>,
): number {
  let total = 0;
  for (const pool of pools) {
    const wanted = demand.get(pool.name);
    if (!wanted || (wanted.cpu === 0 && wanted.memoryGiB === 0)) continue;
    total += priceLowerBound(poolSizes(pool), { ...wanted, nodes: 0 });
  }
  return total;
}
