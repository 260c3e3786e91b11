// The vCPU quota a launch would meet, known before its PUT. Azure refuses a VM whose cores would take a
// quota past its limit (a family's, the region's total, or the region's low-priority cores for spot);
// the usages API states each limit and what is used. Read together with the cores of VMs this app has
// chosen but Azure may not count yet (in flight), the room left says which offerings would be refused:
// those are blocked before any PUT, in the words Azure's refusal would use, instead of learned from one.
// A reserved offering runs on its reservation's cores and meets no quota here.
import type { OfferingBlock } from '../../../decisions/offering-blocks.js';
import type { CapacityType } from '../../../models/karpenter.js';

/** One quota as the usages API reports it (`name.value`, `currentValue`, `limit`). */
export interface QuotaUsage {
  name: string;
  currentValue: number;
  limit: number;
}

/** Cores a launch chose and Azure's last usage read may not include. */
export interface InFlightCores {
  skuFamily: string;
  cpu: number;
  capacityType: CapacityType;
}

/** The usages API's names for the region's totals (the families are named by their SKU family). */
export const REGIONAL_CORES = 'cores';
export const LOW_PRIORITY_CORES = 'lowPriorityCores';

/** A quota with too little room for some size: the block, and the sentence that says why. */
export interface QuotaShortfall {
  block: OfferingBlock;
  /** Azure's refusal in its own words, with the figures that led to it. */
  message: string;
  /** The quota's name as the failure memory records it ("family:<skuFamily>", "regional", "lowPriority"). */
  quota: string;
  free: number;
}

const lower = (s: string): string => s.toLowerCase();

/**
 * The blocks the quotas' room implies: sizes of a family with more vCPUs than its quota has free, every
 * on-demand size above the regional room, every spot size above the low-priority room. A quota whose
 * limit the read did not state (absent, or negative as Azure writes "no limit") blocks nothing.
 */
export function quotaShortfalls(
  usages: readonly QuotaUsage[],
  inFlight: readonly InFlightCores[],
): QuotaShortfall[] {
  const onDemand = inFlight.filter((c) => c.capacityType === 'on-demand');
  const spot = inFlight.filter((c) => c.capacityType === 'spot');
  const sum = (cores: readonly InFlightCores[]): number => cores.reduce((total, c) => total + c.cpu, 0);
  const shortfalls: QuotaShortfall[] = [];
  for (const usage of usages) {
    if (!(usage.limit >= 0)) continue;
    const name = lower(usage.name);
    if (name === lower(REGIONAL_CORES)) {
      const free = room(usage, sum(onDemand));
      shortfalls.push({
        block: { capacityType: 'on-demand', where: 'everywhere', sizes: { minCpu: free + 1 } },
        message: refusal('Total Regional Cores', usage, sum(onDemand)),
        quota: 'regional',
        free,
      });
    } else if (name === lower(LOW_PRIORITY_CORES)) {
      const free = room(usage, sum(spot));
      shortfalls.push({
        block: { capacityType: 'spot', where: 'everywhere', sizes: { minCpu: free + 1 } },
        message: refusal('Low Priority Cores', usage, sum(spot)),
        quota: 'lowPriority',
        free,
      });
    } else if (name.endsWith('family')) {
      const family = onDemand.filter((c) => lower(c.skuFamily) === name);
      const free = room(usage, sum(family));
      shortfalls.push({
        block: {
          capacityType: 'on-demand',
          where: 'everywhere',
          sizes: { skuFamily: usage.name, minCpu: free + 1 },
        },
        message: refusal(`${usage.name} Cores`, usage, sum(family)),
        quota: `family:${usage.name}`,
        free,
      });
    }
  }
  return shortfalls;
}

/** The vCPUs a quota still has for new VMs; never negative. */
function room(usage: QuotaUsage, inFlight: number): number {
  return Math.max(0, Math.floor(usage.limit - usage.currentValue - inFlight));
}

function refusal(quotaName: string, usage: QuotaUsage, inFlight: number): string {
  const inFlightText = inFlight > 0 ? `, In Flight: ${inFlight}` : '';
  return (
    `exceeding approved ${quotaName} quota (known before the PUT from the usages API: ` +
    `Current Limit: ${usage.limit}, Current Usage: ${usage.currentValue}${inFlightText})`
  );
}
