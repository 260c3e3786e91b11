// vCPU quota as state, per subscription and location, as Compute keeps it: a regional vCPU limit
// (`cores`), one per VM family, and a separate one for spot and low-priority VMs (`lowPriorityCores`).
// Usage is derived from the VMs that exist, so a launch is refused with the figures a caller would see
// in the usages API, deleting a VM frees its cores, and no bookkeeping can drift from the VMs. Quota
// fault rules (faults.ts) refuse launches by themselves; while one applies to a whole quota, the usages
// API shows that quota as full too, so a caller that reads usages and one that meets the error agree.

import {
  familyQuotaExceeded,
  lowPriorityQuotaExceeded,
  regionalQuotaExceeded,
  type QuotaFigures,
} from './azure-messages.js';
import { ArmError } from './errors.js';
import type { FaultRegistry, FaultRule, SyncFaultEffect } from './faults.js';
import { findSku, skuVcpus, type ResourceSku } from './sku-catalog.js';
import type { VmPriority } from './vm-spec.js';
import type { StoredVm, VmStore } from './vm-store.js';

/** An item of `GET .../locations/{location}/usages`, as Compute answers it. */
export interface Usage {
  unit: 'Count';
  currentValue: number;
  limit: number;
  name: { value: string; localizedValue: string };
}

export interface QuotaLimitInput {
  /** Omitted: every subscription. */
  subscriptionId?: string;
  /** Omitted: every location. */
  location?: string;
  /** `cores`, `lowPriorityCores`, `virtualMachines` or a family of the SKU catalog (`standardDSv5Family`). */
  name: string;
  limit: number;
}

/**
 * Generous defaults, so tests that are not about quota never meet it. (A new Azure subscription has far
 * less: typically 10 to 350 regional vCPUs. The VM count default is Azure's documented 25,000 per region.)
 */
export const defaultQuotaLimits = {
  cores: 10_000,
  lowPriorityCores: 10_000,
  family: 10_000,
  virtualMachines: 25_000,
} as const;

interface UsageName {
  value: string;
  localizedValue: string;
}

const coresName: UsageName = { value: 'cores', localizedValue: 'Total Regional vCPUs' };
const lowPriorityName: UsageName = {
  value: 'lowPriorityCores',
  localizedValue: 'Total Regional Low-priority vCPUs',
};
const vmCountName: UsageName = { value: 'virtualMachines', localizedValue: 'Virtual Machines' };
const regionalNames = new Map<string, UsageName>(
  [coresName, lowPriorityName, vmCountName].map((name) => [name.value.toLowerCase(), name]),
);

/** `standardDSv5Family` → `Standard DSv5 Family vCPUs`, as the usages API localizes family names. */
export function familyLocalizedName(family: string): string {
  const core = family.replace(/^standard/i, '').replace(/Family$/i, '');
  return `Standard ${core} Family vCPUs`;
}

const sameName = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/**
 * A VM holds its vCPUs from its PUT until it is gone: while creating, running, deallocated (Azure counts
 * deallocated VMs against quota) and deleting. One whose provisioning failed holds none (the failure
 * released the allocation), also while it is being deleted.
 */
function holdsCores(vm: StoredVm): boolean {
  if (vm.provisioningState === 'Failed') return false;
  if (vm.provisioningState === 'Deleting') return vm.failure === undefined;
  return true;
}

function isLowPriority(priority: VmPriority): boolean {
  return priority === 'Spot' || priority === 'Low';
}

/**
 * The vCPU quotas a VM of `priority` and `family` is charged to, as Azure counts them: a Spot or Low VM
 * only the low-priority vCPUs, a Regular one its family's and the regional vCPUs.
 */
export function chargedQuotas(priority: VmPriority, family: string): string[] {
  return isLowPriority(priority) ? [lowPriorityName.value] : [family, coresName.value];
}

interface SizeFacts {
  family: string;
  vcpus: number;
}

export interface QuotaStateDeps {
  store: VmStore;
  catalog: () => readonly ResourceSku[];
  faults: FaultRegistry;
}

export class QuotaState {
  private overrides: Array<Required<Pick<QuotaLimitInput, 'name' | 'limit'>> & QuotaLimitInput> = [];
  /** (size|location) → family and vCPUs; the catalog does not change while the emulator runs. */
  private readonly sizeFacts = new Map<string, SizeFacts | undefined>();

  constructor(private readonly deps: QuotaStateDeps) {}

  /** Sets a limit; throws for an unknown quota name or a limit that is not a whole number ≥ 0. */
  setLimit(input: QuotaLimitInput): void {
    if (!Number.isInteger(input.limit) || input.limit < 0) {
      throw new Error(`a quota limit must be a whole number, 0 or more (got ${String(input.limit)})`);
    }
    const name = this.canonicalName(input.name);
    if (name === undefined) {
      throw new Error(
        `unknown quota '${input.name}': use cores, lowPriorityCores, virtualMachines or a family of the SKU catalog`,
      );
    }
    const same = (o: QuotaLimitInput): boolean =>
      sameName(o.name, name) &&
      (o.subscriptionId ?? '').toLowerCase() === (input.subscriptionId ?? '').toLowerCase() &&
      (o.location ?? '').toLowerCase() === (input.location ?? '').toLowerCase();
    this.overrides = this.overrides.filter((o) => !same(o));
    this.overrides.push({ ...input, name });
  }

  /** Restores the default limits. */
  clear(): void {
    this.overrides = [];
  }

  /** The limit in force: the most specific override (subscription and location over either, over none). */
  limitOf(subscriptionId: string | undefined, location: string, name: string): number {
    let best: { limit: number; rank: number } | undefined;
    for (const o of this.overrides) {
      if (!sameName(o.name, name)) continue;
      if (o.location !== undefined && !sameName(o.location, location)) continue;
      if (o.subscriptionId !== undefined) {
        if (subscriptionId === undefined || !sameName(o.subscriptionId, subscriptionId)) continue;
      }
      const rank = (o.location !== undefined ? 2 : 0) + (o.subscriptionId !== undefined ? 1 : 0);
      if (!best || rank >= best.rank) best = { limit: o.limit, rank };
    }
    if (best) return best.limit;
    const key = name.toLowerCase();
    if (key === 'cores') return defaultQuotaLimits.cores;
    if (key === 'lowprioritycores') return defaultQuotaLimits.lowPriorityCores;
    if (key === 'virtualmachines') return defaultQuotaLimits.virtualMachines;
    return defaultQuotaLimits.family;
  }

  /** Whether the catalog offers anything in `location` (the usages API knows only those). */
  isKnownLocation(location: string): boolean {
    return this.deps.catalog().some((sku) => sku.locations.some((l) => sameName(l, location)));
  }

  locations(): string[] {
    return [...new Set(this.deps.catalog().flatMap((sku) => sku.locations))];
  }

  /**
   * What the usages API answers for (subscription, location): `cores`, `virtualMachines`, each family of
   * the catalog there, `lowPriorityCores`. Without a subscription the VMs of every subscription count
   * (the same figures when there is one). A quota fault rule that applies to the whole quota shows (see
   * `faultOverlay`).
   */
  usages(location: string, subscriptionId?: string): Usage[] {
    const used = this.realUsage(subscriptionId, location);
    const rules = this.deps.faults.list();
    const entry = (name: UsageName): Usage => {
      const real = used.get(name.value.toLowerCase()) ?? 0;
      const figures = this.overlaid(rules, location, name.value, {
        currentValue: real,
        limit: this.limitOf(subscriptionId, location, name.value),
      });
      return { unit: 'Count', currentValue: figures.currentValue, limit: figures.limit, name: { ...name } };
    };
    const families = this.familiesIn(location);
    return [
      entry(coresName),
      entry(vmCountName),
      ...families.map((family) => entry({ value: family, localizedValue: familyLocalizedName(family) })),
      entry(lowPriorityName),
    ];
  }

  /**
   * Throws Compute's quota error, with the real figures, when a new VM of `sku` would exceed a limit: a
   * Regular VM its family's and the regional vCPUs (family first), a Spot or Low one the low-priority vCPUs
   * only (as Azure counts them).
   */
  checkLaunch(subscriptionId: string, location: string, priority: VmPriority, sku: ResourceSku): void {
    const required = skuVcpus(sku);
    const used = this.realUsage(subscriptionId, location);
    const figures = (name: string): QuotaFigures | undefined => {
      const currentUsage = used.get(name.toLowerCase()) ?? 0;
      const currentLimit = this.limitOf(subscriptionId, location, name);
      return currentUsage + required > currentLimit
        ? { currentLimit, currentUsage, additionalRequired: required }
        : undefined;
    };
    if (isLowPriority(priority)) {
      const low = figures('lowPriorityCores');
      if (low) throw lowPriorityQuotaExceeded(location, low);
      return;
    }
    const family = figures(sku.family);
    if (family) throw familyQuotaExceeded(sku.family, location, family);
    const regional = figures('cores');
    if (regional) throw regionalQuotaExceeded(location, regional);
  }

  private familiesIn(location: string): string[] {
    const families = this.deps
      .catalog()
      .filter((sku) => sku.locations.some((l) => sameName(l, location)))
      .map((sku) => sku.family);
    return [...new Set(families)];
  }

  private canonicalName(name: string): string | undefined {
    const regional = regionalNames.get(name.toLowerCase());
    if (regional) return regional.value;
    return this.deps.catalog().find((sku) => sameName(sku.family, name))?.family;
  }

  private factsOf(vmSize: string, location: string): SizeFacts | undefined {
    const key = `${vmSize}|${location}`.toLowerCase();
    if (this.sizeFacts.has(key)) return this.sizeFacts.get(key);
    const sku = findSku(this.deps.catalog(), vmSize, location);
    const facts = sku ? { family: sku.family, vcpus: skuVcpus(sku) } : undefined;
    this.sizeFacts.set(key, facts);
    return facts;
  }

  /** Used vCPUs by lower-cased quota name, and the VM count, from the VMs in the store. */
  private realUsage(subscriptionId: string | undefined, location: string): Map<string, number> {
    const used = new Map<string, number>();
    const add = (name: string, amount: number): void => {
      const key = name.toLowerCase();
      used.set(key, (used.get(key) ?? 0) + amount);
    };
    const vms = subscriptionId === undefined ? this.deps.store.all() : this.deps.store.list(subscriptionId);
    for (const vm of vms) {
      if (!sameName(vm.spec.location, location)) continue;
      add('virtualMachines', 1);
      if (!holdsCores(vm)) continue;
      const facts = this.factsOf(vm.spec.vmSize, vm.spec.location);
      if (!facts) continue;
      for (const quota of chargedQuotas(vm.spec.priority, facts.family)) add(quota, facts.vcpus);
    }
    return used;
  }

  /**
   * A quota fault rule that applies to a whole quota in `location` (no vmName other than `*`, no zone) makes
   * the usages API show that quota full. The first such rule decides (rules fire in the order they were
   * added). Figures the rule states are reported as stated, so the API and the refused PUT's message agree;
   * a figure it leaves out is filled so that no room is left: usage = max(real usage, stated limit),
   * limit = that usage. Which quota: familyQuota → its `family`, else the family of its `vmSize` there,
   * else every family; regionalQuota → `cores`; lowPriorityQuota → `lowPriorityCores`.
   */
  private overlaid(
    rules: readonly FaultRule[],
    location: string,
    quotaName: string,
    real: { currentValue: number; limit: number },
  ): { currentValue: number; limit: number } {
    for (const rule of rules) {
      const effect = rule.effect;
      if (!isQuotaEffect(effect)) continue;
      const match = rule.match ?? {};
      if (match.vmName !== undefined && match.vmName !== '*') continue;
      if (match.zone !== undefined) continue;
      if (match.location !== undefined && !sameName(match.location, location)) continue;
      if (!this.ruleCovers(effect, match.vmSize, location, quotaName)) continue;
      const currentValue = effect.currentUsage ?? Math.max(real.currentValue, effect.currentLimit ?? 0);
      return { currentValue, limit: effect.currentLimit ?? currentValue };
    }
    return real;
  }

  private ruleCovers(
    effect: QuotaFaultEffect,
    vmSize: string | undefined,
    location: string,
    quotaName: string,
  ): boolean {
    switch (effect.type) {
      case 'regionalQuota':
        return sameName(quotaName, 'cores');
      case 'lowPriorityQuota':
        return sameName(quotaName, 'lowPriorityCores');
      case 'familyQuota': {
        if (regionalNames.has(quotaName.toLowerCase())) return false;
        if (effect.family !== undefined) return sameName(effect.family, quotaName);
        if (vmSize === undefined) return true;
        const family = this.factsOf(vmSize, location)?.family;
        return family !== undefined && sameName(family, quotaName);
      }
    }
  }
}

type QuotaFaultEffect = Extract<
  SyncFaultEffect,
  { type: 'familyQuota' | 'regionalQuota' | 'lowPriorityQuota' }
>;

function isQuotaEffect(effect: FaultRule['effect']): effect is QuotaFaultEffect {
  return (
    effect.type === 'familyQuota' || effect.type === 'regionalQuota' || effect.type === 'lowPriorityQuota'
  );
}

/** The usages API for an unknown location, as ARM answers for a region the resource type is not in. */
export function locationNotAvailable(location: string, known: readonly string[]): ArmError {
  return new ArmError(
    400,
    'LocationNotAvailableForResourceType',
    `The provided location '${location}' is not available for resource type 'Microsoft.Compute/locations/usages'. ` +
      `List of available regions for the resource type is '${known.join(',')}'.`,
  );
}
