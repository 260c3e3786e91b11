// Resource amounts as numbers the simulation can add and compare quickly: cpu in millicores, every
// other resource in whole base units (bytes, pods, devices), as kube-scheduler rounds them.
import type { ResourceList } from '../../models/kube.js';
import { formatMilliCpu, parseMilliQuantity, parseWholeQuantity } from '../quantity.js';
import type { SchedulingContainer, SchedulingPodSpec } from './types.js';

/** resource name → amount; absent means 0. */
export type Resources = Map<string, number>;

export type ParsedResources = { resources: Resources } | { error: string };

export function parseResources(list: ResourceList | undefined, what: string): ParsedResources {
  const resources: Resources = new Map();
  for (const [name, quantity] of Object.entries(list ?? {})) {
    try {
      const amount = name === 'cpu' ? parseMilliQuantity(quantity) : parseWholeQuantity(quantity);
      if (!Number.isFinite(amount) || amount < 0) {
        return { error: `${what} ${name}: "${String(quantity)}" is not a non-negative quantity` };
      }
      if (amount > 0) resources.set(name, amount);
    } catch {
      return { error: `${what} ${name}: "${String(quantity)}" is not a valid quantity` };
    }
  }
  return { resources };
}

export function addInto(target: Resources, add: Resources): Resources {
  for (const [name, amount] of add) target.set(name, (target.get(name) ?? 0) + amount);
  return target;
}

export function sum(a: Resources, b: Resources): Resources {
  return addInto(new Map(a), b);
}

function maxInto(target: Resources, other: Resources): void {
  for (const [name, amount] of other) if (amount > (target.get(name) ?? 0)) target.set(name, amount);
}

/** Every resource in `requests` is at most what `available` has. */
export function fits(requests: Resources, available: Resources): boolean {
  for (const [name, amount] of requests) if (amount > (available.get(name) ?? 0)) return false;
  return true;
}

/** a + b + c fits within `available`, without allocating a sum. */
export function fitsSum(a: Resources, b: Resources, c: Resources | undefined, available: Resources): boolean {
  for (const [name, amount] of a) {
    if (amount + (b.get(name) ?? 0) + (c?.get(name) ?? 0) > (available.get(name) ?? 0)) return false;
  }
  for (const [name, amount] of b) {
    if (!a.has(name) && amount + (c?.get(name) ?? 0) > (available.get(name) ?? 0)) return false;
  }
  if (c) {
    for (const [name, amount] of c) {
      if (!a.has(name) && !b.has(name) && amount > (available.get(name) ?? 0)) return false;
    }
  }
  return true;
}

/** The first resource that does not fit, described for a FailedScheduling message. */
export function shortfall(requests: Resources, available: Resources): string | undefined {
  for (const [name, amount] of requests) {
    const has = available.get(name) ?? 0;
    if (amount > has) return `${name} ${formatAmount(name, amount)} > ${formatAmount(name, has)}`;
  }
  return undefined;
}

export function formatAmount(name: string, amount: number): string {
  if (name === 'cpu') return formatMilliCpu(amount);
  if (name === 'memory' || name === 'ephemeral-storage' || name.startsWith('hugepages-')) {
    return amount % (1024 * 1024) === 0 ? `${amount / (1024 * 1024)}Mi` : String(amount);
  }
  return String(amount);
}

export function toResourceList(resources: Resources): ResourceList {
  const list: ResourceList = {};
  for (const name of [...resources.keys()].sort()) list[name] = formatAmount(name, resources.get(name) ?? 0);
  return list;
}

function containerRequests(container: SchedulingContainer, what: string): ParsedResources {
  // kube-scheduler defaults a missing request to the limit (the API server does it on create); the pods
  // read from the API already carry it, but a caller passing a bare spec gets the same answer.
  const limits = parseResources(container.resources?.limits, `${what} limit`);
  if ('error' in limits) return limits;
  const requests = parseResources(container.resources?.requests, `${what} request`);
  if ('error' in requests) return requests;
  for (const [name, amount] of limits.resources) {
    if (!requests.resources.has(name) && !Object.hasOwn(container.resources?.requests ?? {}, name)) {
      requests.resources.set(name, amount);
    }
  }
  return requests;
}

/**
 * The requests kube-scheduler charges a pod with (component-helpers PodRequests, as Karpenter's
 * RequestsForPods uses it): the larger of (every container plus every restartable init container) and
 * (each regular init container plus the sidecars started before it), plus spec.overhead, plus one pod.
 */
export function podRequests(spec: SchedulingPodSpec): ParsedResources {
  const total: Resources = new Map();
  for (const [index, container] of (spec.containers ?? []).entries()) {
    const parsed = containerRequests(container, `container ${container.name ?? index}`);
    if ('error' in parsed) return parsed;
    addInto(total, parsed.resources);
  }
  const initPeak: Resources = new Map();
  const sidecars: Resources = new Map();
  for (const [index, container] of (spec.initContainers ?? []).entries()) {
    const parsed = containerRequests(container, `init container ${container.name ?? index}`);
    if ('error' in parsed) return parsed;
    if (container.restartPolicy === 'Always') {
      addInto(sidecars, parsed.resources);
      maxInto(initPeak, sidecars);
    } else {
      maxInto(initPeak, sum(sidecars, parsed.resources));
    }
  }
  addInto(total, sidecars);
  maxInto(total, initPeak);
  const overhead = parseResources(spec.overhead, 'overhead');
  if ('error' in overhead) return overhead;
  addInto(total, overhead.resources);
  total.set('pods', 1);
  return { resources: total };
}
