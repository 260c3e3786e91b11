// The region's offerings, derived from the cached Resource SKUs catalog once per catalog refresh rather
// than on every launch: the SKU adapter returns the same array until its TTL passes, so the derived
// offerings are kept per array.
import { offeringsFromSkus, type Offering, type SkuRecord } from '../decisions/offerings.js';
import type { CloudProviderParts } from './parts.js';

const derived = new WeakMap<readonly SkuRecord[], Offering[]>();

export async function catalogOfferings(
  deps: Pick<CloudProviderParts, 'skus' | 'settings'>,
): Promise<Offering[]> {
  const skus = await deps.skus.list();
  let offerings = derived.get(skus);
  if (!offerings) {
    offerings = offeringsFromSkus(skus, deps.settings.azure.location);
    derived.set(skus, offerings);
  }
  return offerings;
}
