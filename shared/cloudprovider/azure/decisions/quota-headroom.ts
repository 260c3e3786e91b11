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
  const shortfalls: QuotaShortfall[] = [];
  for (const usage of usages) {
    const scope = scopeOf(usage);
    if (!scope || !(usage.limit >= 0)) continue;
    const held = inFlight
      .filter((c) => c.capacityType === scope.capacityType)
      .filter((c) => scope.skuFamily === undefined || lower(c.skuFamily) === lower(scope.skuFamily))
      .reduce((total, c) => total + c.cpu, 0);
    const free = room(usage, held);
    const minCpu = free + 1;
    shortfalls.push({
      block: {
        capacityType: scope.capacityType,
        where: 'everywhere',
        sizes: scope.skuFamily === undefined ? { minCpu } : { skuFamily: scope.skuFamily, minCpu },
      },
      message: refusal(scope.quotaName, usage, held),
      quota: scope.quota,
      free,
    });
  }
  return shortfalls;
}

/** Which VMs a usage's quota counts, as Azure names it in a refusal and the failure memory records it. */
function scopeOf(
  usage: QuotaUsage,
): { capacityType: CapacityType; skuFamily?: string; quotaName: string; quota: string } | undefined {
  const name = lower(usage.name);
  if (name === lower(REGIONAL_CORES))
    return { capacityType: 'on-demand', quotaName: 'Total Regional Cores', quota: 'regional' };
  if (name === lower(LOW_PRIORITY_CORES))
    return { capacityType: 'spot', quotaName: 'Low Priority Cores', quota: 'lowPriority' };
  if (name.endsWith('family'))
    return {
      capacityType: 'on-demand',
      skuFamily: usage.name,
      quotaName: `${usage.name} Cores`,
      quota: `family:${usage.name}`,
    };
  return undefined;
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
