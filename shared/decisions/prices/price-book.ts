// VM prices per size and capacity type for one region, and how they are read from the Azure Retail
// Prices API's items. Pure: the adapter (shared/azure/retail-prices.ts) fetches, this decides.
import type { CapacityType } from '../../models/karpenter.js';
import { FALLBACK_REGION, STATIC_PRICES_AS_OF, staticOnDemandPrices } from './static-prices.js';

export interface PriceBook {
  readonly region: string;
  /** USD/h by VM size (armSkuName). */
  readonly onDemand: ReadonlyMap<string, number>;
  readonly spot: ReadonlyMap<string, number>;
  /** When the prices were read (ISO 8601): the static table's date, or the last refresh. */
  readonly asOf: string;
  readonly source: 'static' | 'retail-prices-api';
}

/** The fields of a Retail Prices API item this module reads. */
export interface RetailPriceItem {
  armSkuName?: string;
  armRegionName?: string;
  retailPrice?: number;
  unitPrice?: number;
  meterName?: string;
  skuName?: string;
  productName?: string;
  type?: string;
  serviceName?: string;
  unitOfMeasure?: string;
}

/** The shipped table for a region (eastus for a region it does not know); no spot prices. */
export function staticPriceBook(region: string): PriceBook {
  const table = staticOnDemandPrices[region.toLowerCase()] ?? staticOnDemandPrices[FALLBACK_REGION] ?? {};
  return {
    region: region.toLowerCase(),
    onDemand: new Map(Object.entries(table)),
    spot: new Map(),
    asOf: STATIC_PRICES_AS_OF,
    source: 'static',
  };
}

/**
 * On-demand and spot prices from Retail Prices API items, with the Azure provider's rules: only
 * Consumption items of Virtual Machines priced per hour; Windows products and "Low Priority" meters
 * are skipped (the Linux price is what a node pays; low priority is the retired predecessor of spot);
 * a meter or SKU name ending in " Spot" is a spot price. Where one size has several items (meters of
 * several regions, or a renamed meter), the lowest positive price is kept.
 */
export function pricesFromRetailItems(items: readonly RetailPriceItem[]): {
  onDemand: Map<string, number>;
  spot: Map<string, number>;
} {
  const onDemand = new Map<string, number>();
  const spot = new Map<string, number>();
  for (const item of items) {
    const size = item.armSkuName;
    const price = item.retailPrice ?? item.unitPrice;
    if (!size || price === undefined || !Number.isFinite(price) || price <= 0) continue;
    if (item.type !== undefined && item.type !== 'Consumption') continue;
    if (item.serviceName !== undefined && item.serviceName !== 'Virtual Machines') continue;
    if (item.unitOfMeasure !== undefined && item.unitOfMeasure !== '1 Hour') continue;
    if ((item.productName ?? '').endsWith(' Windows')) continue;
    const meter = item.meterName ?? '';
    const sku = item.skuName ?? '';
    if (meter.endsWith(' Low Priority') || sku.endsWith(' Low Priority')) continue;
    const target = meter.endsWith(' Spot') || sku.endsWith(' Spot') ? spot : onDemand;
    const known = target.get(size);
    if (known === undefined || price < known) target.set(size, price);
  }
  return { onDemand, spot };
}

/**
 * A refreshed book: the API's prices, with the static table filling sizes the API did not return, so
 * a partial answer never leaves a known size unpriced. Undefined when the items hold no VM price at
 * all: such an answer says nothing, and the caller keeps what it knew.
 */
export function refreshedPriceBook(
  region: string,
  items: readonly RetailPriceItem[],
  asOf: string,
): PriceBook | undefined {
  const fallback = staticPriceBook(region);
  const { onDemand, spot } = pricesFromRetailItems(items);
  if (onDemand.size === 0 && spot.size === 0) return undefined;
  for (const [size, price] of fallback.onDemand) if (!onDemand.has(size)) onDemand.set(size, price);
  return { region: fallback.region, onDemand, spot, asOf, source: 'retail-prices-api' };
}

/**
 * What an offering of this size and capacity type costs; undefined when the size is unknown. A spot
 * offering without a spot price is priced like on-demand (see static-prices.ts).
 */
export function priceOf(book: PriceBook, vmSize: string, capacityType: CapacityType): number | undefined {
  if (capacityType === 'spot') return book.spot.get(vmSize) ?? book.onDemand.get(vmSize);
  const onDemand = book.onDemand.get(vmSize);
  if (capacityType === 'reserved')
    return onDemand === undefined ? undefined : onDemand * RESERVED_PRICE_FACTOR;
  return onDemand;
}

/**
 * A reservation is paid for whether a VM uses it or not, so upstream's design treats a reserved offering
 * as free while keeping the on-demand order between reserved sizes (so consolidation still moves from a
 * large reserved size to a small one): its price is the on-demand price scaled far below any real one.
 */
export const RESERVED_PRICE_FACTOR = 1e-7;
