// What each of ARM's launch-failure answers makes the project avoid, and for how long, over a small
// catalog probed around the failed offering: on-demand Standard_D4s_v5 in westus2-2 (4 vCPUs, quota
// family standardDSv5Family) unless a case fails the spot one.
import { describe, expect, it } from 'vitest';
import {
  quotaScopesFreedBy,
  rememberFailure,
} from '../../shared/cloudprovider/azure/decisions/failure-memory.js';
import {
  LOW_PRIORITY_QUOTA_TTL_SECONDS,
  LOW_QUOTA_TTL_SECONDS,
  SKU_NOT_AVAILABLE_ON_DEMAND_TTL_SECONDS,
  SKU_NOT_AVAILABLE_SPOT_TTL_SECONDS,
  ZERO_QUOTA_TTL_SECONDS,
  ALLOCATION_FAILURE_TTL_SECONDS,
  classifyLaunchError,
  quotaFigures,
  type LaunchErrorInput,
} from '../../shared/cloudprovider/azure/decisions/launch-errors.js';
import { isOfferingBlocked } from '../../shared/decisions/offering-blocks.js';
import { offeringKey, offeringsFromSkus, type Offering } from '../../shared/decisions/offerings.js';
import { skuCatalog } from '../../local/arm-emulator/sku-catalog.js';
import { armLaunchErrors as errors } from '../fixtures/arm-launch-errors.js';

const catalog = offeringsFromSkus(skuCatalog, 'westus2');

function find(capacityType: string, vmSize: string, zone: string): Offering {
  const found = catalog.find(
    (o) => o.capacityType === capacityType && o.vmSize === vmSize && o.zone === zone,
  );
  if (!found) throw new Error(`catalog lacks ${capacityType}/${vmSize}/${zone}`);
  return found;
}

// The probes, by letter: the failed offering and its neighbours in every direction that matters.
const probes = {
  a: find('on-demand', 'Standard_D4s_v5', 'westus2-2'), // failed (on-demand cases)
  b: find('spot', 'Standard_D4s_v5', 'westus2-2'), // other capacity type, same zone (failed in spot cases)
  c: find('on-demand', 'Standard_D8s_v5', 'westus2-2'), // same family, larger, same zone
  d: find('on-demand', 'Standard_D2s_v5', 'westus2-2'), // same family, smaller, same zone
  e: find('on-demand', 'Standard_D4s_v5', 'westus2-1'), // same size, other zone
  f: find('on-demand', 'Standard_D4s_v5', '0'), // same size, regional placement
  g: find('on-demand', 'Standard_D4ds_v5', 'westus2-2'), // other quota family, same size
  h: find('spot', 'Standard_D8s_v5', 'westus2-1'), // spot, same family, larger, other zone
} as const;
type Probe = keyof typeof probes;

const HOUR = 3600;

describe('failure memory over ARM error payloads', () => {
  it.each<[string, LaunchErrorInput, Probe, string, Probe[], number | undefined]>([
    // name, payload, failed probe, reason, blocked probes (all others stay available), TTL (s)
    [
      'ZonalAllocationFailed: the family from 4 vCPUs up in zone 2, both capacity types, as the provider',
      errors.zonalAllocationFailed,
      'a',
      'ZonalAllocationFailure',
      ['a', 'b', 'c'],
      ALLOCATION_FAILURE_TTL_SECONDS,
    ],
    [
      'AllocationFailed: the family from 4 vCPUs up in every zone, both capacity types; the regional offering stays the fallback',
      errors.allocationFailed,
      'a',
      'AllocationFailure',
      ['a', 'b', 'c', 'e', 'h'],
      ALLOCATION_FAILURE_TTL_SECONDS,
    ],
    [
      'OverconstrainedZonalAllocationRequest: only the failed capacity type, in zone 2',
      errors.overconstrainedZonal,
      'a',
      'OverconstrainedZonalAllocationFailure',
      ['a', 'c'],
      ALLOCATION_FAILURE_TTL_SECONDS,
    ],
    [
      'OverconstrainedAllocationRequest: only the failed capacity type, in every zone',
      errors.overconstrained,
      'a',
      'OverconstrainedAllocationFailure',
      ['a', 'c', 'e'],
      ALLOCATION_FAILURE_TTL_SECONDS,
    ],
    [
      'SkuNotAvailable on-demand: every zone for on-demand, 23 h',
      errors.skuNotAvailable,
      'a',
      'SKUNotAvailable',
      ['a', 'c', 'e'],
      SKU_NOT_AVAILABLE_ON_DEMAND_TTL_SECONDS,
    ],
    [
      'SkuNotAvailable spot: every zone for spot, 1 h',
      errors.skuNotAvailable,
      'b',
      'SKUNotAvailable',
      ['b', 'h'],
      SKU_NOT_AVAILABLE_SPOT_TTL_SECONDS,
    ],
    [
      // Provider: the family from 4 vCPUs up. Here: no core is left, so every size of the family.
      'family quota with nothing left: every size of the family, everywhere, on-demand, 10 min',
      errors.familyQuotaExhausted,
      'a',
      'SubscriptionQuotaReached',
      ['a', 'c', 'd', 'e', 'f'],
      LOW_QUOTA_TTL_SECONDS,
    ],
    [
      'family quota with a limit of 0: the same, for 1 h',
      errors.familyQuotaZeroLimit,
      'a',
      'SubscriptionQuotaReached',
      ['a', 'c', 'd', 'e', 'f'],
      ZERO_QUOTA_TTL_SECONDS,
    ],
    [
      '2 cores left of the family: sizes above 2 vCPUs, so D2s_v5 still launches',
      errors.familyQuotaPartlyLeft,
      'a',
      'SubscriptionQuotaReached',
      ['a', 'c', 'e', 'f'],
      LOW_QUOTA_TTL_SECONDS,
    ],
    [
      'family quota reported through the LRO: the same memory as on the PUT',
      errors.familyQuotaInLro,
      'a',
      'SubscriptionQuotaReached',
      ['a', 'c', 'e', 'f'],
      LOW_QUOTA_TTL_SECONDS,
    ],
    [
      // Provider: nothing is remembered (InsufficientCapacityError). Here: every family's sizes above
      // the 2 regional cores left, on-demand.
      'regional quota with 2 cores left: on-demand sizes above 2 vCPUs of every family',
      errors.regionalQuota,
      'a',
      'SubscriptionQuotaReached',
      ['a', 'c', 'e', 'f', 'g'],
      LOW_QUOTA_TTL_SECONDS,
    ],
    [
      // Provider: all spot. Here: the 3 low-priority cores left still fit a 2-vCPU spot VM.
      'low-priority quota with 3 cores left: spot sizes above 3 vCPUs',
      errors.lowPriorityQuota,
      'b',
      'SubscriptionQuotaReached',
      ['b', 'h'],
      LOW_PRIORITY_QUOTA_TTL_SECONDS,
    ],
    ['throttling: nothing remembered, retried', errors.throttled, 'a', 'Throttled', [], undefined],
    [
      '5xx on the PUT: nothing remembered, retried',
      errors.serverErrorOnPut,
      'a',
      'LaunchFailed',
      [],
      undefined,
    ],
    [
      'the same server error in the LRO text: nothing remembered, retried alike',
      errors.serverErrorInLro,
      'a',
      'LaunchFailed',
      [],
      undefined,
    ],
  ])('%s', (_name, payload, failedProbe, reason, blockedProbes, ttl) => {
    const failure = classifyLaunchError(payload);
    expect(failure.reason).toBe(reason);
    const remembered = failure.unavailable
      ? rememberFailure(failure.unavailable, probes[failedProbe])
      : undefined;
    expect(remembered?.ttlSeconds).toBe(ttl);
    const blocked = (Object.keys(probes) as Probe[]).filter((p) =>
      isOfferingBlocked(probes[p], remembered?.blocks),
    );
    expect(blocked).toEqual(blockedProbes);
    expect(failure.retryable).toBe(ttl === undefined);
  });

  it('a failed regional offering blocks the regional placement only, leaving the zones', () => {
    const failure = classifyLaunchError(errors.allocationFailed);
    const remembered = rememberFailure(failure.unavailable ?? fail(), probes.f);
    expect(catalog.filter((o) => isOfferingBlocked(o, remembered.blocks)).map(offeringKey)).toEqual([
      'spot/Standard_D4s_v5/0',
      'on-demand/Standard_D4s_v5/0',
      'spot/Standard_D8s_v5/0',
      'on-demand/Standard_D8s_v5/0',
      'spot/Standard_D16s_v5/0',
      'on-demand/Standard_D16s_v5/0',
    ]);
  });

  it('low-priority quota without figures blocks every spot offering for 1 h, as the provider', () => {
    const failure = classifyLaunchError(errors.lowPriorityQuotaNoFigures);
    const remembered = rememberFailure(failure.unavailable ?? fail(), probes.b);
    expect(remembered.ttlSeconds).toBe(HOUR);
    const blocked = catalog.filter((o) => isOfferingBlocked(o, remembered.blocks));
    expect(blocked.length).toBe(catalog.filter((o) => o.capacityType === 'spot').length);
  });

  it('quota blocks name the quota whose freed cores forget them', () => {
    const family = rememberFailure(
      classifyLaunchError(errors.familyQuotaPartlyLeft).unavailable ?? fail(),
      probes.a,
    );
    const regional = rememberFailure(
      classifyLaunchError(errors.regionalQuota).unavailable ?? fail(),
      probes.a,
    );
    const spot = rememberFailure(
      classifyLaunchError(errors.lowPriorityQuota).unavailable ?? fail(),
      probes.b,
    );
    expect([family.quota, regional.quota, spot.quota]).toEqual([
      'family:standarddsv5family',
      'regional',
      'lowPriority',
    ]);
    expect(quotaScopesFreedBy({ skuFamily: 'standardDSv5Family', capacityType: 'on-demand' })).toEqual([
      'family:standarddsv5family',
      'regional',
    ]);
    expect(quotaScopesFreedBy({ skuFamily: 'standardDSv5Family', capacityType: 'spot' })).toEqual([
      'lowPriority',
    ]);
    expect(
      rememberFailure(classifyLaunchError(errors.zonalAllocationFailed).unavailable ?? fail(), probes.a)
        .quota,
    ).toBeUndefined();
  });

  it('reads the figures of a quota message', () => {
    expect(quotaFigures(errors.familyQuotaPartlyLeft.message)).toEqual({ limit: 10, usage: 8, required: 4 });
    expect(quotaFigures(errors.lowPriorityQuotaNoFigures.message)).toBeUndefined();
  });
});

function fail(): never {
  throw new Error('expected a failure memory');
}
