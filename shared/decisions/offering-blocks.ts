// The memory of launch failures: which offerings to avoid after Azure refused one, and the test whether
// an offering is among them. A block names a capacity type, where (one zone, every offering of a
// placement scope, or everywhere) and which sizes (one size, a quota family from a vCPU count up, or
// every size from a vCPU count up), so one record covers what Azure's answer says will fail again.
import type { CapacityType } from '../models/karpenter.js';
import { placementScopeOf, type PlacementScope } from './placement.js';

/** What a block is matched against: the fields of an offering it reads. */
export interface BlockableOffering {
  vmSize: string;
  skuFamily: string;
  cpu: number;
  zone: string;
  zoneNumber?: string;
  capacityType: CapacityType;
  /** The reservation a reserved offering draws on (capacity-reservations.ts); absent for the others. */
  reservationId?: string;
}

export const CAPACITY_TYPES_BOTH: readonly CapacityType[] = ['spot', 'on-demand'];

export type BlockedPlace = { zone: string } | { scope: PlacementScope } | 'everywhere';

export type BlockedSizes =
  | { vmSize: string }
  /** Sizes of an Azure quota family (Offering.skuFamily) with at least minCpu vCPUs. */
  | { skuFamily: string; minCpu: number }
  /** Sizes of every family with at least minCpu vCPUs. */
  | { minCpu: number };

export interface OfferingBlock {
  capacityType: CapacityType;
  where: BlockedPlace;
  sizes: BlockedSizes;
  /** Only the offerings of this reservation: what a refused reservation says nothing about the rest. */
  reservationId?: string;
}

function placeKey(where: BlockedPlace): string {
  if (where === 'everywhere') return '*';
  return 'zone' in where ? `zone=${where.zone}` : `scope=${where.scope}`;
}

function sizesKey(sizes: BlockedSizes): string {
  if ('vmSize' in sizes) return `size=${sizes.vmSize}`;
  if ('skuFamily' in sizes) return `family=${sizes.skuFamily.toLowerCase()}>=${sizes.minCpu}`;
  return `any>=${sizes.minCpu}`;
}

/**
 * One key per distinct block: marking the same block again replaces its record (and extends its TTL);
 * blocks with different vCPU thresholds are separate records, each with its own TTL, and while both are
 * active the lower threshold rules (the provider keeps only the more restrictive one).
 */
export function blockKey(block: OfferingBlock): string {
  const reservation = block.reservationId === undefined ? '' : `|reservation=${block.reservationId}`;
  return `${block.capacityType}|${placeKey(block.where)}|${sizesKey(block.sizes)}${reservation}`;
}

function placeMatches(where: BlockedPlace, offering: BlockableOffering): boolean {
  if (where === 'everywhere') return true;
  if ('zone' in where) return offering.zone === where.zone;
  return placementScopeOf(offering) === where.scope;
}

function sizesMatch(sizes: BlockedSizes, offering: BlockableOffering): boolean {
  if ('vmSize' in sizes) return offering.vmSize.toLowerCase() === sizes.vmSize.toLowerCase();
  if ('skuFamily' in sizes) {
    return offering.skuFamily.toLowerCase() === sizes.skuFamily.toLowerCase() && offering.cpu >= sizes.minCpu;
  }
  return offering.cpu >= sizes.minCpu;
}

export function blocks(block: OfferingBlock, offering: BlockableOffering): boolean {
  return (
    block.capacityType === offering.capacityType &&
    (block.reservationId === undefined || block.reservationId === offering.reservationId) &&
    placeMatches(block.where, offering) &&
    sizesMatch(block.sizes, offering)
  );
}

/** Whether any active block rules the offering out. */
export function isOfferingBlocked(
  offering: BlockableOffering,
  active: readonly OfferingBlock[] | undefined,
): boolean {
  return active !== undefined && active.some((block) => blocks(block, offering));
}
