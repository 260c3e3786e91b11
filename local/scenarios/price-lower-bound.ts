// The hourly price no packing can beat, for the provisioning bench's and the scenarios' summaries, so a
// ratio to it measures waste rather than how loose the bound is.
//
// Two bounds, the larger counts:
// - by resource: the requested vCPUs at the catalog's lowest price per vCPU, or the requested memory at
//   its lowest price per GiB (a VM's price pays for both at once);
// - by node count, when the pods need at least N nodes (a hostname anti-affinity or spread lets a node
//   hold only so many pods of a group; a zone spread needs a node in each zone): every node costs at
//   least g(c), the cheapest size with c vCPUs (or GiB) for pods, and so at least h(c), the largest convex
//   function below g (the lower convex hull of the sizes' (vCPUs, price) points and (0, cheapest
//   price)). By Jensen, N nodes that hold C vCPUs between them cost at least N·h(C/N), and more nodes
//   cost no less (N·h(C/N) grows with N for a convex h with h(0) ≥ 0).
import { compileSelector } from '../../shared/decisions/scheduling/selectors.js';
import type { SchedulingPod } from '../../shared/decisions/scheduling/types.js';

export interface PricedSize {
  /** USD per hour. */
  price: number;
  /** What pods may use on a node of this size: vCPUs and GiB. */
  cpu: number;
  memoryGiB: number;
}

export interface Demand {
  cpu: number;
  memoryGiB: number;
  /** Nodes the pods need at least, whatever their sizes (0 when nothing forces any). */
  nodes: number;
}

export function priceLowerBound(sizes: readonly PricedSize[], demand: Demand): number {
  const priced = sizes.filter((s) => Number.isFinite(s.price) && s.cpu > 0 && s.memoryGiB > 0);
  if (priced.length === 0) return NaN;
  const perCpu = Math.min(...priced.map((s) => s.price / s.cpu));
  const perGiB = Math.min(...priced.map((s) => s.price / s.memoryGiB));
  let bound = Math.max(demand.cpu * perCpu, demand.memoryGiB * perGiB);
  if (demand.nodes <= 0) return bound;
  for (const [total, amount] of [
    [demand.cpu, (s: PricedSize) => s.cpu],
    [demand.memoryGiB, (s: PricedSize) => s.memoryGiB],
  ] as const) {
    const largest = Math.max(...priced.map(amount));
    // Nodes hold at most the largest size each, so at least total / largest of them are needed too.
    const nodes = Math.max(demand.nodes, total / largest);
    const hull = lowerHull(priced.map((s) => ({ x: amount(s), y: s.price })));
    bound = Math.max(bound, nodes * valueOn(hull, total / nodes));
  }
  return bound;
}

interface Point {
  x: number;
  y: number;
}

/** The lower convex hull of the points and (0, the lowest price), left to right. */
function lowerHull(points: readonly Point[]): Point[] {
  const cheapest = Math.min(...points.map((p) => p.y));
  const sorted = [{ x: 0, y: cheapest }, ...points].sort((a, b) => a.x - b.x || a.y - b.y);
  const hull: Point[] = [];
  for (const point of sorted) {
    if (hull.length > 0 && (hull[hull.length - 1] as Point).x === point.x) continue;
    while (hull.length >= 2) {
      const [a, b] = [hull[hull.length - 2] as Point, hull[hull.length - 1] as Point];
      // Drop b when it lies on or above the segment from a to the new point.
      if ((b.y - a.y) * (point.x - a.x) >= (point.y - a.y) * (b.x - a.x)) hull.pop();
      else break;
    }
    hull.push(point);
  }
  return hull;
}

/** The hull's value at x (0 ≤ x ≤ the last point's x), by linear interpolation. */
function valueOn(hull: readonly Point[], x: number): number {
  for (let i = 1; i < hull.length; i++) {
    const [a, b] = [hull[i - 1] as Point, hull[i] as Point];
    if (x <= b.x) return a.y + ((b.y - a.y) * (x - a.x)) / (b.x - a.x);
  }
  return (hull[hull.length - 1] as Point).y;
}

/**
 * The nodes hostname constraints force, as the scheduling simulation (like Karpenter's) enforces them:
 * pods with the same labels and a required hostname anti-affinity selecting those labels each need a
 * node of their own; with the same DoNotSchedule hostname spread of maxSkew k selecting their own labels
 * a node holds at most k of them (the simulation counts the empty NodeClaim it could open as a domain).
 * Pods without the constraint are not counted, and different sets may share nodes, so the largest set
 * is what is forced.
 */
export function nodesForcedByHostname(pods: readonly SchedulingPod[]): number {
  const sets = new Map<string, { count: number; perNode: number }>();
  const count = (key: string, perNode: number) => {
    const set = sets.get(key);
    if (set) set.count++;
    else sets.set(key, { count: 1, perNode });
  };
  for (const pod of pods) {
    const labels = pod.metadata.labels ?? {};
    const own = JSON.stringify([pod.metadata.namespace, labels]);
    const selectsOwn = (selector: Parameters<typeof compileSelector>[0]) =>
      selector !== undefined && compileSelector(selector)(labels);
    const terms = pod.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
    for (const term of terms) {
      if (term.topologyKey === HOSTNAME && !term.namespaces?.length && selectsOwn(term.labelSelector))
        count(JSON.stringify([own, 'anti-affinity', term]), 1);
    }
    for (const spread of pod.spec.topologySpreadConstraints ?? []) {
      if (spread.topologyKey !== HOSTNAME || spread.whenUnsatisfiable !== 'DoNotSchedule') continue;
      if (selectsOwn(spread.labelSelector)) count(JSON.stringify([own, 'spread', spread]), spread.maxSkew);
    }
  }
  let forced = 0;
  for (const set of sets.values()) forced = Math.max(forced, Math.ceil(set.count / set.perNode));
  return forced;
}

const HOSTNAME = 'kubernetes.io/hostname';
