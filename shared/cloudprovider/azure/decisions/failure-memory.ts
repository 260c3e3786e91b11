// The blocks a launch failure leaves in the unavailable-offerings table: the failure's memory
// (launch-errors.ts, relative to the failed offering) made concrete for the offering that failed.
import { CAPACITY_TYPES_BOTH } from '../../../decisions/offering-blocks.js';
import type { BlockedSizes, OfferingBlock } from '../../../decisions/offering-blocks.js';
import type { FailureMemory } from './launch-errors.js';
import type { Offering } from '../../../decisions/offerings.js';
import { placementScopeOf } from '../../../decisions/placement.js';

export interface RememberedFailure {
  blocks: OfferingBlock[];
  ttlSeconds: number;
  /** For quota blocks: which freed cores make them stale (see QuotaRelease). */
  quota?: string;
}

/** The quota a block stands for, as the unavailable-offerings table records it. */
export function quotaScopeOf(kind: NonNullable<FailureMemory['quota']>, skuFamily: string): string {
  return kind === 'family' ? `family:${skuFamily.toLowerCase()}` : kind;
}

/** The quota scopes whose blocks are stale once a VM of this family and capacity type is deleted. */
export function quotaScopesFreedBy(vm: {
  skuFamily: string;
  capacityType: Offering['capacityType'];
}): string[] {
  if (vm.capacityType === 'spot') return ['lowPriority'];
  // A VM inside its reservation used the reservation's cores, not the quota's free ones.
  if (vm.capacityType === 'reserved') return [];
  return [quotaScopeOf('family', vm.skuFamily), 'regional'];
}

function sizesFor(memory: FailureMemory, failed: Offering): BlockedSizes {
  if (memory.sizes === 'failedSize') return { vmSize: failed.vmSize };
  if (memory.sizes === 'familyAtOrAbove') {
    // The provider's hedge for catalog entries without a family: block the size itself.
    return failed.skuFamily ? { skuFamily: failed.skuFamily, minCpu: failed.cpu } : { vmSize: failed.vmSize };
  }
  if ('minCpu' in memory.sizes) return { minCpu: memory.sizes.minCpu };
  // Sizes above the remaining cores no longer fit; the failed size never stays allowed, whatever the
  // message's arithmetic says.
  const minCpu = Math.min(failed.cpu, Math.max(1, memory.sizes.remainingCores + 1));
  if (memory.sizes.family === 'any') return { minCpu };
  return failed.skuFamily ? { skuFamily: failed.skuFamily, minCpu } : { vmSize: failed.vmSize };
}

/** The blocks and TTL to record after `failed` failed as `memory` describes. */
export function rememberFailure(memory: FailureMemory, failed: Offering): RememberedFailure {
  // "Both" is spot and on-demand; a reserved offering that failed so is out of its reservation too.
  const capacityTypes =
    memory.capacityTypes === 'both'
      ? [...new Set([...CAPACITY_TYPES_BOTH, failed.capacityType])]
      : [failed.capacityType];
  const reservation =
    memory.reservationOnly && failed.reservationId !== undefined
      ? { reservationId: failed.reservationId }
      : {};
  const where =
    memory.where === 'everywhere'
      ? ('everywhere' as const)
      : memory.where === 'zone'
        ? { zone: failed.zone }
        : { scope: placementScopeOf(failed) };
  const sizes = sizesFor(memory, failed);
  return {
    blocks: capacityTypes.map((capacityType) => ({
      capacityType,
      where,
      sizes,
      ...(capacityType === failed.capacityType ? reservation : {}),
    })),
    ttlSeconds: memory.ttlSeconds[failed.capacityType],
    ...(memory.quota ? { quota: quotaScopeOf(memory.quota, failed.skuFamily) } : {}),
  };
}

/**
 * Azure took a spot VM of this offering back: spot capacity of its size in its zone is short, so the
 * replacement (launched at once) and later launches avoid that offering for as long as a spot allocation
 * failure is avoided; on-demand and the size's other zones stay available.
 */
export const SPOT_PREEMPTION_TTL_SECONDS = 60 * 60;
export const SPOT_PREEMPTED_REASON = 'SpotPreempted';

/** What a preemption says about where it happened: the size and the zone of the spot VM. */
export type PreemptedOffering = Pick<Offering, 'vmSize' | 'zone'>;

export function rememberPreemption(preempted: PreemptedOffering): RememberedFailure {
  return {
    blocks: [{ capacityType: 'spot', where: { zone: preempted.zone }, sizes: { vmSize: preempted.vmSize } }],
    ttlSeconds: SPOT_PREEMPTION_TTL_SECONDS,
  };
}
