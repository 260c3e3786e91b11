// Cost-aware packing of the NodeClaims a solve opens. Karpenter's first fit (simulation.ts) places pod
// by pod on the emptiest NodeClaim that still fits and keeps every instance type that holds the pods, so
// a NodeClaim ends as whatever size its pods happened to fill, often one whose price per vCPU or GiB is
// far from the catalog's best. This pass re-packs the pods whose place no other decision depends on and
// keeps the result only when it is cheaper, so it never costs more than the first fit.
//
// Which pods may move (Mobility, decided by the simulation from its topology groups):
// - free: no topology group (its own, or any other pod's spread, affinity or anti-affinity) constrains
//   or counts it and it uses no host port: it may go to any new NodeClaim of the NodePool that took it
//   whose requirements already imply its own;
// - domain: every topology key that constrains or counts it is pinned to one value on its NodeClaim
//   and none is the hostname (zone spreads, zonal affinity): it may go only to a NodeClaim with the
//   same requirements, so every domain count stays as the first fit left it;
// - fixed: the rest (hostname anti-affinity and spreads, host ports) stays where the first fit put it.
// Pods on existing nodes and in-flight NodeClaims are not touched (existing capacity first), and no
// pod changes NodePool (weights are kept).
//
// The pass, per NodePool and requirement set:
// 1. a NodeClaim holding fixed pods keeps them and drops its movable ones, which may make it a smaller,
//    cheaper size; movable pods then fill the room its cheapest size leaves, largest first, for free;
// 2. the rest are packed into bins of one instance type, first-fit-decreasing and also bin by bin in
//    the pods' own mix of shapes, trying the types with the best estimated price for the pods' total
//    demand in every resource; each bin then takes the cheapest type that holds what it got, so the
//    last, partly filled bin is sized down; the cheapest of these trials wins;
// 3. the new plan is checked as the first fit checks a NodeClaim it opens: options that fit the pods,
//    DaemonSets and host ports, NodePool limits charged with each NodeClaim's largest option in order
//    (the `nodes` limit counts NodeClaims as before), minValues (the NodePool's, or as the first fit
//    lowered them under BestEffort: the packer never lowers one itself), also among the options kept
//    after the cut at maxInstanceTypes. A plan that fails any check, or is not cheaper, is dropped
//    whole and the first fit's NodeClaims are kept.
// The launched price of a NodeClaim is its cheapest available compatible option, as launch pays it.
// Deterministic: every order is by price, size, name or the first fit's own order, never by chance.
import { NO_DAEMONS } from './daemonsets.js';
import { portsConflict } from './host-ports.js';
import { cheapestOffering, instanceTypeMismatch, type CompiledInstanceType } from './instance-types.js';
import { largestCapacity, optionsWithinLimits, subtractLargest } from './limits.js';
import { firstMinValuesShortfall } from './min-values.js';
import { NewClaim, type ClaimMember } from './new-claim.js';
import type { HostPort } from './pods.js';
import { incompatibility, narrowedBy, type RequirementMap } from './requirement-map.js';
import { addInto, fitsSum, type Resources } from './resources.js';
import type { Template } from './templates.js';
import { HOSTNAME_KEY } from './topology.js';
import { exactly, toRequirements } from './value-set.js';

export interface PackingContext {
  /** Options a NodeClaim keeps, cheapest first: minValues must hold among those (finalizeClaim). */
  readonly maxInstanceTypes: number;
  /** Keep the first fit unless the cheaper plan needs no more NodeClaims than it. */
  readonly noMoreNodeClaims: boolean;
  /** Per NodePool template, what its limits had left before the solve opened any NodeClaim. */
  readonly limitsBefore: ReadonlyMap<Template, Resources | undefined>;
  /** Where the pod on this NodeClaim may move without changing any other answer (see Mobility). */
  readonly mobility: (member: ClaimMember, claim: NewClaim) => Mobility;
  /** A hostname placeholder and creation index for a NodeClaim the packer opens. */
  readonly nextHostname: () => { hostname: string; index: number };
}

/**
 * free: to any NodeClaim of its NodePool whose requirements imply the pod's; domain: only to one whose
 * requirements are the same as its own NodeClaim's (same zone and every other pinned topology domain);
 * fixed: stays.
 */
export type Mobility = 'free' | 'domain' | 'fixed';

/** How many bin types step 2 tries per pod set: the best by estimated price. */
const BIN_TYPES_TRIED = 4;
const EMPTY: Resources = new Map();

interface Bin {
  readonly template: Template;
  readonly hostname: string;
  readonly index: number;
  readonly requirements: RequirementMap;
  /** The template's options the requirements allow, cheapest first. */
  readonly compatible: readonly CompiledInstanceType[];
  readonly members: ClaimMember[];
  readonly requests: Resources;
  /** requirementsKey of the requirements. */
  readonly key: string;
}

/** Movable pods of one NodePool with one requirement set, grouped by identical requests. */
interface Pool {
  readonly template: Template;
  /** Free pods: the placement variant's requirements, which a target's requirements must imply. */
  readonly podRequirements: RequirementMap | undefined;
  /** Domain pods: the requirements key (hostname aside) a target must have. */
  readonly claimKey: string | undefined;
  /** The template's requirements narrowed by the pods', without a hostname: a fresh bin's. */
  readonly requirements: RequirementMap;
  readonly compatible: readonly CompiledInstanceType[];
  readonly shapes: Shape[];
}

interface Shape {
  readonly key: string;
  readonly requests: Resources;
  readonly members: ClaimMember[];
  /** Members before this index are placed. */
  next: number;
}

/** The first fit's NodeClaims, or a cheaper plan for the same pods that passes every check. */
export function repackForCost(claims: readonly NewClaim[], context: PackingContext): readonly NewClaim[] {
  if (!claims.some((claim) => claim.members.some((m) => context.mobility(m, claim) !== 'fixed')))
    return claims;
  const packer = new CostPacker(context);
  const bins = packer.plan(claims);
  if (bins === undefined) return claims;
  const repacked = packer.build(bins);
  if (repacked === undefined) return claims;
  if (context.noMoreNodeClaims && repacked.length > claims.length) return claims;
  const before = claims.reduce((sum, claim) => sum + launchPrice(claim), 0);
  const after = repacked.reduce((sum, claim) => sum + launchPrice(claim), 0);
  return after < before - 1e-9 ? repacked : claims;
}

/** What launch is expected to pay for the NodeClaim: its cheapest available compatible option. */
function launchPrice(claim: NewClaim): number {
  const prices = claim.template.pricesUnder(claim.requirements);
  let best = Infinity;
  for (const it of claim.instanceTypes) best = Math.min(best, prices.get(it) ?? Infinity);
  return best;
}

class CostPacker {
  private readonly compatibleByKey = new Map<string, readonly CompiledInstanceType[]>();

  constructor(private readonly context: PackingContext) {}

  /** Steps 1 and 2: bins for every pod, or undefined when some pod set cannot be packed. */
  plan(claims: readonly NewClaim[]): Bin[] | undefined {
    const pools = new Map<string, Pool>();
    const fixed: Bin[] = [];
    for (const claim of claims) {
      const staying: ClaimMember[] = [];
      for (const member of claim.members) {
        const mobility = this.context.mobility(member, claim);
        if (mobility === 'fixed') staying.push(member);
        else if (!this.poolFor(pools, claim, member, mobility)) return undefined;
      }
      if (staying.length === 0) continue;
      const bin = this.bin(claim.template, claim.hostname, claim.index, claim.requirements);
      for (const member of staying) this.addTo(bin, member);
      fixed.push(bin);
    }
    const ordered = [...pools.values()];
    for (const pool of ordered) pool.shapes.sort(largerFirst);
    for (const bin of fixed) this.fillRoom(bin, ordered);
    const fresh: Bin[] = [];
    for (const pool of ordered) {
      const packed = this.packFresh(pool);
      if (packed === undefined) return undefined;
      fresh.push(...packed);
    }
    return [...fixed, ...fresh];
  }

  /** Step 3: the NodeClaims of the plan, or undefined when one fails a check the first fit makes. */
  build(bins: readonly Bin[]): NewClaim[] | undefined {
    const remaining = new Map<Template, Resources | undefined>();
    for (const [template, limits] of this.context.limitsBefore)
      remaining.set(template, limits && new Map(limits));
    const claims: NewClaim[] = [];
    // Bins with the same options and requests (and no host ports) fit the same options: one list each.
    const fitting = new Map<readonly CompiledInstanceType[], Map<string, CompiledInstanceType[]>>();
    const fittingOptions = (bin: Bin, ports: readonly HostPort[]) => {
      if (ports.length) return bin.compatible.filter((it) => holds(bin.template, it, bin.requests, ports));
      let byRequests = fitting.get(bin.compatible);
      if (!byRequests) fitting.set(bin.compatible, (byRequests = new Map()));
      const key = resourcesKey(bin.requests);
      let options = byRequests.get(key);
      if (!options) {
        options = bin.compatible.filter((it) => holds(bin.template, it, bin.requests, ports));
        byRequests.set(key, options);
      }
      return options;
    };
    for (const bin of bins) {
      const ports = bin.members.flatMap((m) => m.variant.group.hostPorts);
      const limits = remaining.get(bin.template);
      const options = optionsWithinLimits(fittingOptions(bin, ports), limits);
      if (options.length === 0) return undefined;
      // Options are cheapest first (compatible is), so the kept ones are a prefix, as finalizeClaim cuts.
      const kept = options.slice(0, this.context.maxInstanceTypes);
      if (firstMinValuesShortfall(kept, bin.requirements) !== undefined) return undefined;
      if (limits) subtractLargest(limits, largestCapacity(options));
      const claim = new NewClaim(bin.template, bin.hostname, bin.requirements, options, bin.index);
      for (const member of bin.members) claim.add(member, bin.requirements, options);
      claims.push(claim);
    }
    return claims.sort((a, b) => a.index - b.index);
  }

  /** Adds the movable pod to its pool; false if the template turns its requirements down. */
  private poolFor(
    pools: Map<string, Pool>,
    claim: NewClaim,
    member: ClaimMember,
    mobility: Exclude<Mobility, 'fixed'>,
  ): boolean {
    const template = claim.template;
    const requirementsOfPool = mobility === 'free' ? member.variant.requirements : claim.requirements;
    const key = `${template.name}\u0000${mobility}\u0000${requirementsKey(requirementsOfPool)}`;
    let pool = pools.get(key);
    if (!pool) {
      let requirements: RequirementMap;
      if (mobility === 'free') {
        const base = template.compatibleWith(member.variant);
        // Cannot happen for a pod the first fit placed under this template; keep the first fit then.
        if ('reason' in base) return false;
        requirements = base.requirements;
      } else {
        requirements = new Map([...claim.requirements].filter(([key]) => key !== HOSTNAME_KEY));
      }
      pool = {
        template,
        podRequirements: mobility === 'free' ? member.variant.requirements : undefined,
        claimKey: mobility === 'domain' ? requirementsKey(claim.requirements) : undefined,
        requirements,
        compatible: this.compatible(template, requirements),
        shapes: [],
      };
      pools.set(key, pool);
    }
    const shapeKey = resourcesKey(member.requests);
    let shape = pool.shapes.find((s) => s.key === shapeKey);
    if (!shape)
      pool.shapes.push((shape = { key: shapeKey, requests: member.requests, members: [], next: 0 }));
    shape.members.push(member);
    return true;
  }

  private bin(template: Template, hostname: string, index: number, requirements: RequirementMap): Bin {
    return {
      template,
      hostname,
      index,
      requirements,
      compatible: this.compatible(template, requirements),
      members: [],
      requests: new Map(),
      key: requirementsKey(requirements),
    };
  }

  private addTo(bin: Bin, member: ClaimMember): void {
    bin.members.push(member);
    addInto(bin.requests, member.requests);
  }

  /** The template's options the requirements allow (hostname aside), cheapest first; cached. */
  private compatible(template: Template, requirements: RequirementMap): readonly CompiledInstanceType[] {
    const key = `${template.name}\u0000${requirementsKey(requirements)}`;
    let compatible = this.compatibleByKey.get(key);
    if (!compatible) {
      const prices = template.pricesUnder(requirements);
      compatible = template.instanceTypes
        .filter(
          (it) =>
            instanceTypeMismatch(it, requirements) === undefined &&
            cheapestOffering(it, requirements) !== undefined,
        )
        .sort((a, b) => (prices.get(a) ?? Infinity) - (prices.get(b) ?? Infinity) || byName(a, b));
      this.compatibleByKey.set(key, compatible);
    }
    return compatible;
  }

  /** Step 1: movable pods into the room the bin's cheapest size leaves, so they cost nothing more. */
  private fillRoom(bin: Bin, pools: readonly Pool[]): void {
    const ports = bin.members.flatMap((m) => m.variant.group.hostPorts);
    const cheapest = bin.compatible.find((it) => holds(bin.template, it, bin.requests, ports));
    if (!cheapest) return;
    const room = bin.template.room.get(cheapest) ?? cheapest.allocatable;
    for (const pool of pools) {
      if (!accepts(pool, bin)) continue;
      for (const shape of pool.shapes) {
        while (shape.next < shape.members.length && fitsSum(bin.requests, shape.requests, undefined, room)) {
          this.addTo(bin, shape.members[shape.next++] as ClaimMember);
        }
      }
    }
  }

  /** Step 2: the pool's unplaced pods in fresh bins, the cheapest of the bin types tried. */
  private packFresh(pool: Pool): Bin[] | undefined {
    const shapes = pool.shapes.filter((s) => s.next < s.members.length);
    if (shapes.length === 0) return [];
    const demand: Resources = new Map();
    for (const shape of shapes) {
      for (const [name, amount] of shape.requests)
        demand.set(name, (demand.get(name) ?? 0) + amount * (shape.members.length - shape.next));
    }
    const prices = pool.template.pricesUnder(pool.requirements);
    const estimates = pool.compatible
      .filter((it) => shapes.every((s) => holds(pool.template, it, s.requests, [])))
      .map((it) => ({
        it,
        estimate: (prices.get(it) ?? Infinity) * binsFor(demand, roomOf(pool.template, it)),
      }))
      .sort((a, b) => a.estimate - b.estimate || byName(a.it, b.it))
      .slice(0, BIN_TYPES_TRIED);
    // Bins of equal content take the same size: sized once per content across the trials.
    const sizePrice = new Map<string, number>();
    const priceOfBin = (members: readonly ClaimMember[]): number => {
      const requests = totalOf(members);
      const key = resourcesKey(requests);
      let price = sizePrice.get(key);
      if (price === undefined) {
        const size = pool.compatible.find((option) => holds(pool.template, option, requests, []));
        price = size ? (prices.get(size) ?? Infinity) : Infinity;
        sizePrice.set(key, price);
      }
      return price;
    };
    let best: { cost: number; bins: ClaimMember[][] } | undefined;
    for (const { it } of estimates) {
      const room = roomOf(pool.template, it);
      for (const strategy of [firstFitDecreasing, proportionalFill]) {
        const bins = strategy(shapes, room);
        let cost = 0;
        for (const bin of bins) {
          cost += priceOfBin(bin);
          if (best !== undefined && cost >= best.cost) break;
        }
        if (best === undefined || cost < best.cost) best = { cost, bins };
      }
    }
    if (best === undefined || !Number.isFinite(best.cost)) return undefined;
    return best.bins.map((members) => {
      const { hostname, index } = this.context.nextHostname();
      const requirements = new Map([...pool.requirements, [HOSTNAME_KEY, exactly(hostname)]]);
      const bin = this.bin(pool.template, hostname, index, requirements);
      for (const member of members) this.addTo(bin, member);
      return bin;
    });
  }
}

/**
 * First fit decreasing into bins of one size: shapes by their largest share of the bin, then each
 * shape's pods into the first bins with room, in the first fit's own pod order.
 */
function firstFitDecreasing(shapes: readonly Shape[], room: Resources): ClaimMember[][] {
  const share = (requests: Resources) => {
    let largest = 0;
    for (const [name, amount] of requests) largest = Math.max(largest, amount / (room.get(name) ?? 0));
    return largest;
  };
  const ordered = [...shapes].sort((a, b) => share(b.requests) - share(a.requests) || largerFirst(a, b));
  const bins: { used: Resources; members: ClaimMember[] }[] = [];
  for (const shape of ordered) {
    let next = shape.next;
    for (const bin of bins) {
      while (next < shape.members.length && fitsSum(bin.used, shape.requests, undefined, room)) {
        bin.members.push(shape.members[next++] as ClaimMember);
        addInto(bin.used, shape.requests);
      }
      if (next === shape.members.length) break;
    }
    while (next < shape.members.length) {
      const bin = { used: new Map<string, number>(), members: [] as ClaimMember[] };
      while (next < shape.members.length && fitsSum(bin.used, shape.requests, undefined, room)) {
        bin.members.push(shape.members[next++] as ClaimMember);
        addInto(bin.used, shape.requests);
      }
      bins.push(bin);
    }
  }
  return bins.map((bin) => bin.members);
}

/**
 * Bins of one size filled one after the other, each with the pod set's mix: the next pod is of the
 * shape furthest behind its share of the pods placed so far (among shapes that still fit). Every bin,
 * the last included, then has the pods' ratio of cpu to memory, so the last one is sized down to a type
 * of the same family instead of holding whatever the largest-first order left over.
 */
function proportionalFill(shapes: readonly Shape[], room: Resources): ClaimMember[][] {
  const next = shapes.map((s) => s.next);
  const total = shapes.reduce((sum, s) => sum + s.members.length - s.next, 0);
  const share = shapes.map((s) => (s.members.length - s.next) / total);
  const placed = shapes.map(() => 0);
  const bins: ClaimMember[][] = [];
  let done = 0;
  while (done < total) {
    const used: Resources = new Map();
    const members: ClaimMember[] = [];
    for (;;) {
      let chosen = -1;
      let behind = -Infinity;
      for (const [index, shape] of shapes.entries()) {
        if ((next[index] as number) >= shape.members.length) continue;
        const lag = (done + 1) * (share[index] as number) - (placed[index] as number);
        if (lag > behind && fitsSum(used, shape.requests, undefined, room)) {
          behind = lag;
          chosen = index;
        }
      }
      if (chosen < 0) break;
      const shape = shapes[chosen] as Shape;
      members.push(shape.members[next[chosen] as number] as ClaimMember);
      next[chosen] = (next[chosen] as number) + 1;
      placed[chosen] = (placed[chosen] as number) + 1;
      addInto(used, shape.requests);
      done++;
    }
    // Every shape fits an empty bin of this size (the caller checked), so a bin is never empty.
    if (members.length === 0) break;
    bins.push(members);
  }
  return bins;
}

/** Whether the option holds the requests after its DaemonSets, with no host-port conflict. */
function holds(
  template: Template,
  it: CompiledInstanceType,
  requests: Resources,
  ports: readonly HostPort[],
): boolean {
  if (ports.length && portsConflict((template.daemonOverhead.get(it) ?? NO_DAEMONS).hostPorts, ports))
    return false;
  return fitsSum(requests, EMPTY, undefined, roomOf(template, it));
}

function roomOf(template: Template, it: CompiledInstanceType): Resources {
  return template.room.get(it) ?? it.allocatable;
}

/** Bins of this room the demand needs at least, in its scarcest resource (fractional). */
function binsFor(demand: Resources, room: Resources): number {
  let bins = 0;
  for (const [name, amount] of demand) bins = Math.max(bins, amount / (room.get(name) ?? 0));
  return Math.max(1, bins);
}

function totalOf(members: readonly ClaimMember[]): Resources {
  const total: Resources = new Map();
  for (const member of members) addInto(total, member.requests);
  return total;
}

function accepts(pool: Pool, bin: Bin): boolean {
  if (pool.template !== bin.template) return false;
  if (pool.claimKey !== undefined) return pool.claimKey === bin.key;
  return pool.podRequirements !== undefined && implies(bin.requirements, pool.podRequirements);
}

/** Whether a NodeClaim with `existing` requirements already meets `wanted` (narrowing nothing). */
function implies(existing: RequirementMap, wanted: RequirementMap): boolean {
  return incompatibility(existing, wanted) === undefined && narrowedBy(existing, wanted) === existing;
}

/** Larger requests first: cpu, then memory, then the rest by name (the queue's order of sizes). */
function largerFirst(a: Shape, b: Shape): number {
  const cpu = (b.requests.get('cpu') ?? 0) - (a.requests.get('cpu') ?? 0);
  if (cpu !== 0) return cpu;
  const memory = (b.requests.get('memory') ?? 0) - (a.requests.get('memory') ?? 0);
  if (memory !== 0) return memory;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

function byName(a: CompiledInstanceType, b: CompiledInstanceType): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function resourcesKey(resources: Resources): string {
  return [...resources]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, amount]) => `${name}=${amount}`)
    .join(',');
}

/** A canonical text of the requirements without the hostname placeholder. */
function requirementsKey(requirements: RequirementMap): string {
  return [...requirements.keys()]
    .filter((key) => key !== HOSTNAME_KEY)
    .sort()
    .map((key) => {
      const set = requirements.get(key);
      return set ? JSON.stringify([toRequirements(key, set), set.allowsAbsent]) : '';
    })
    .join('|');
}
