// Topology spread, pod affinity and pod anti-affinity as counts of matching pods per domain, following
// Karpenter's Topology and TopologyGroup (KS pkg/controllers/provisioning/scheduling/topology*.go):
// - a topology group counts the pods its selector matches, per value of its key (zone, hostname,
//   karpenter.sh/capacity-type or any label); pods with equal constraints share one group;
// - placing a pod narrows the target's requirements to the domains the group allows (the
//   least-populated domain within maxSkew for a spread, a populated one for affinity, an empty one for
//   anti-affinity), so a new NodeClaim gets e.g. `zone In [westus2-2]`;
// - a pod is counted in a domain only once its target has a single value for the key, except for
//   anti-affinity, which blocks every domain the pod might land in;
// - inverse anti-affinity: pods that *other* pods' required anti-affinity selects must avoid those
//   pods' domains, whether the others are already bound or were placed earlier in this solve;
// - hostname domains: a new NodeClaim is its own domain (its placeholder hostname), and for hostname
//   spreads the global minimum is taken as 0 because a new node can always be made.
// Unlike Karpenter, which picks randomly among equally good domains, ties go to the first domain in
// registration order, so a solve is reproducible.
import type { Taint } from '../../models/kube.js';
import type { PodGroup, PodVariant } from './pods.js';
import { incompatibility, type RequirementMap } from './requirement-map.js';
import { compileSelector, selectorKey, type LabelPredicate } from './selectors.js';
import { untoleratedTaint } from './taints.js';
import type { PodAffinityTerm, Toleration, TopologySpreadConstraint } from './types.js';
import { allows, exactly, sameValueSet, singleValue, type ValueSet } from './value-set.js';

export const HOSTNAME_KEY = 'kubernetes.io/hostname';
const EXISTS: ValueSet = { complement: true, values: new Set(), allowsAbsent: false };
const UNBOUNDED_SKEW = Number.MAX_SAFE_INTEGER;

export type TopologyType = 'topology spread' | 'pod affinity' | 'pod anti-affinity';

interface NodeFilter {
  /** An OR of requirement sets; the node must be compatible with one (nodeAffinityPolicy Honor). */
  readonly terms: readonly RequirementMap[] | undefined;
  /** Tolerations the node's taints must pass (nodeTaintsPolicy Honor). */
  readonly tolerations: readonly Toleration[] | undefined;
}

function filterMatches(
  filter: NodeFilter | undefined,
  taints: readonly Taint[],
  requirements: RequirementMap,
): boolean {
  if (!filter) return true;
  if (filter.terms && !filter.terms.some((term) => incompatibility(requirements, term) === undefined))
    return false;
  return !(filter.tolerations && untoleratedTaint(taints, filter.tolerations));
}

/** Domains per topology key the NodePools can offer, with the taints of each NodePool offering them. */
export type DomainUniverse = Map<string, Map<string, (readonly Taint[])[]>>;

export class TopologyGroup {
  readonly domains = new Map<string, number>();
  readonly emptyDomains = new Set<string>();
  private readonly selected = new Map<number, boolean>();

  constructor(
    readonly type: TopologyType,
    readonly key: string,
    private readonly namespaces: ReadonlySet<string>,
    private readonly selector: LabelPredicate,
    private readonly maxSkew: number,
    private readonly minDomains: number | undefined,
    readonly filter: NodeFilter | undefined,
  ) {}

  selectsLabels(namespace: string, labels: Readonly<Record<string, string>>): boolean {
    return this.namespaces.has(namespace) && this.selector(labels);
  }

  selects(group: PodGroup): boolean {
    let selected = this.selected.get(group.id);
    if (selected === undefined) {
      selected = this.selectsLabels(group.namespace, group.labels);
      this.selected.set(group.id, selected);
    }
    return selected;
  }

  counts(group: PodGroup, taints: readonly Taint[], requirements: RequirementMap): boolean {
    return this.selects(group) && filterMatches(this.filter, taints, requirements);
  }

  register(domain: string): void {
    if (this.domains.has(domain)) return;
    this.domains.set(domain, 0);
    this.emptyDomains.add(domain);
  }

  record(domain: string): void {
    this.domains.set(domain, (this.domains.get(domain) ?? 0) + 1);
    this.emptyDomains.delete(domain);
  }

  /** Records a pod placed on a target with these requirements (see the module comment). */
  recordPlacement(requirements: RequirementMap): void {
    const set = requirements.get(this.key);
    if (!set || set.complement) return;
    if (this.type === 'pod anti-affinity') {
      for (const domain of set.values) this.record(domain);
    } else if (set.values.size === 1) {
      for (const domain of set.values) this.record(domain);
    }
  }

  /** The domains the pod may take on a target whose domains are `nodeDomains`, or undefined for none. */
  next(group: PodGroup, podDomains: ValueSet, nodeDomains: ValueSet): ValueSet | undefined {
    switch (this.type) {
      case 'topology spread':
        return this.nextSpread(group, podDomains, nodeDomains);
      case 'pod affinity':
        return this.nextAffinity(group, podDomains, nodeDomains);
      case 'pod anti-affinity':
        return this.nextAntiAffinity(podDomains, nodeDomains);
    }
  }

  private nextSpread(group: PodGroup, podDomains: ValueSet, nodeDomains: ValueSet): ValueSet | undefined {
    const self = this.selects(group) ? 1 : 0;
    const host = this.key === HOSTNAME_KEY ? singleValue(nodeDomains) : undefined;
    if (host !== undefined) {
      return (this.domains.get(host) ?? 0) + self <= this.maxSkew ? exactly(host) : undefined;
    }
    const min = this.minCount(podDomains);
    let best: string | undefined;
    let bestCount = Infinity;
    const listed = !nodeDomains.complement;
    for (const [domain, count] of listed ? this.listedDomains(nodeDomains) : this.domains) {
      if (!listed && !allows(nodeDomains, domain)) continue;
      const withSelf = count + self;
      if (withSelf - min <= this.maxSkew && withSelf < bestCount) {
        best = domain;
        bestCount = withSelf;
      }
    }
    return best === undefined ? undefined : exactly(best);
  }

  /** The known domains among an In set's values, with their counts. */
  private *listedDomains(set: ValueSet): Iterable<[string, number]> {
    for (const domain of set.values) {
      const count = this.domains.get(domain);
      if (count !== undefined) yield [domain, count];
    }
  }

  private minCount(podDomains: ValueSet): number {
    if (this.key === HOSTNAME_KEY) return 0;
    let min = Infinity;
    let supported = 0;
    for (const [domain, count] of this.domains) {
      if (!allows(podDomains, domain)) continue;
      supported++;
      if (count < min) min = count;
    }
    // Fewer eligible domains than minDomains: the global minimum is treated as 0 (kube-scheduler).
    if (this.minDomains !== undefined && supported < this.minDomains) return 0;
    return min;
  }

  private anyPopulated(podDomains: ValueSet): boolean {
    for (const [domain, count] of this.domains) if (count > 0 && allows(podDomains, domain)) return true;
    return false;
  }

  private nextAffinity(group: PodGroup, podDomains: ValueSet, nodeDomains: ValueSet): ValueSet | undefined {
    // A pod that matches its own affinity may start the first domain when no matching pod exists yet.
    const mayBootstrap = () =>
      this.selects(group) && (this.domains.size === this.emptyDomains.size || !this.anyPopulated(podDomains));
    const host = this.key === HOSTNAME_KEY ? singleValue(nodeDomains) : undefined;
    if (host !== undefined) {
      if (!allows(podDomains, host)) return undefined;
      if ((this.domains.get(host) ?? 0) > 0 || mayBootstrap()) return exactly(host);
      return undefined;
    }
    const options: string[] = [];
    if (!nodeDomains.complement) {
      for (const domain of nodeDomains.values) {
        if ((this.domains.get(domain) ?? 0) > 0 && allows(podDomains, domain)) options.push(domain);
      }
    } else {
      for (const [domain, count] of this.domains) {
        if (count > 0 && allows(podDomains, domain) && allows(nodeDomains, domain)) options.push(domain);
      }
    }
    if (options.length > 0) return exactly(...options);
    if (!mayBootstrap()) return undefined;
    // Prefer a domain the target already allows (an open NodeClaim keeps its zone), else any the pod allows.
    for (const domain of this.domains.keys()) {
      if (allows(podDomains, domain) && allows(nodeDomains, domain)) return exactly(domain);
    }
    for (const domain of this.domains.keys()) if (allows(podDomains, domain)) return exactly(domain);
    return undefined;
  }

  private nextAntiAffinity(podDomains: ValueSet, nodeDomains: ValueSet): ValueSet | undefined {
    const host = this.key === HOSTNAME_KEY ? singleValue(nodeDomains) : undefined;
    if (host !== undefined) return (this.domains.get(host) ?? 0) === 0 ? exactly(host) : undefined;
    const options: string[] = [];
    if (!nodeDomains.complement && nodeDomains.values.size < this.emptyDomains.size) {
      for (const domain of nodeDomains.values) {
        if (this.emptyDomains.has(domain) && allows(podDomains, domain)) options.push(domain);
      }
    } else {
      for (const domain of this.emptyDomains) {
        if (allows(nodeDomains, domain) && allows(podDomains, domain)) options.push(domain);
      }
    }
    return options.length > 0 ? exactly(...options) : undefined;
  }

  describe(): string {
    const counts = [...this.domains]
      .slice(0, 25)
      .map(([domain, count]) => `${domain}=${count}`)
      .join(', ');
    return `${this.type} on ${this.key} (counts: ${counts || 'no domains'})`;
  }
}

/** A pod bound to an existing node, counted by every topology group that selects it. */
export interface TopologyNode {
  readonly name: string;
  readonly isNode: boolean;
  readonly labels: Readonly<Record<string, string>>;
  readonly requirements: RequirementMap;
  readonly taints: readonly Taint[];
  readonly pods: readonly { namespace: string; labels: Readonly<Record<string, string>> }[];
}

interface Placement {
  readonly group: PodGroup;
  readonly taints: readonly Taint[];
  readonly requirements: RequirementMap;
}

export type TopologyResult = { requirements: RequirementMap } | { violated: TopologyGroup };

export class Topology {
  private readonly groups = new Map<string, TopologyGroup>();
  private readonly inverse = new Map<string, TopologyGroup>();
  private readonly inverseOwners = new Map<TopologyGroup, Set<number>>();
  private readonly owned = new Map<number, TopologyGroup[]>();
  private readonly inverseSelecting = new Map<number, TopologyGroup[]>();
  private readonly placements: Placement[] = [];

  constructor(
    private readonly universe: DomainUniverse,
    private readonly nodes: readonly TopologyNode[],
    /** Namespaces and their labels, for affinity terms with a namespaceSelector. */
    private readonly namespaceLabels: ReadonlyMap<string, Readonly<Record<string, string>>> = new Map(),
  ) {}

  /**
   * The namespaces an affinity term covers (Karpenter's buildNamespaceList): its own list plus those its
   * namespaceSelector selects; neither given means the pod's own namespace.
   */
  private termNamespaces(term: PodAffinityTerm, namespace: string): string[] {
    if (!term.namespaces?.length && term.namespaceSelector === undefined) return [namespace];
    const names = new Set(term.namespaces ?? []);
    if (term.namespaceSelector !== undefined) {
      const selects = compileSelector(term.namespaceSelector);
      for (const [name, labels] of this.namespaceLabels) if (selects(labels)) names.add(name);
    }
    return [...names].sort();
  }

  /**
   * Tracks the required anti-affinity of a pod (pending or bound) so other pods it selects avoid its
   * domains. Karpenter tracks only required terms here: preferences of other pods are not enforced.
   */
  addInverseAntiAffinity(
    owner: { namespace: string; groupId?: number },
    terms: readonly PodAffinityTerm[],
    boundLabels?: Readonly<Record<string, string>>,
  ): void {
    for (const term of terms) {
      const group = this.groupFor(
        this.inverse,
        'pod anti-affinity',
        term,
        owner.namespace,
        undefined,
        undefined,
      );
      if (owner.groupId !== undefined) {
        let owners = this.inverseOwners.get(group);
        if (!owners) this.inverseOwners.set(group, (owners = new Set()));
        owners.add(owner.groupId);
      }
      const domain = boundLabels?.[group.key];
      if (domain !== undefined) group.record(domain);
    }
  }

  /** Makes a new domain (a new NodeClaim's hostname) known to every group on the key. */
  register(key: string, domain: string): void {
    for (const group of this.groups.values()) if (group.key === key) group.register(domain);
    for (const group of this.inverse.values()) if (group.key === key) group.register(domain);
  }

  /**
   * The topology keys whose domain counts could change if the pod moved: those of every group that
   * constrains it (its own spreads and affinities, other pods' anti-affinity) or counts it (a spread or
   * affinity of any pod that selects it). Empty when no topology answer depends on where it runs.
   */
  keysDependingOn(variant: PodVariant): ReadonlySet<string> {
    const keys = new Set<string>();
    for (const group of [...this.ownedBy(variant), ...this.inverseSelectingGroup(variant.group)])
      keys.add(group.key);
    for (const groups of [this.groups, this.inverse])
      for (const group of groups.values()) if (group.selects(variant.group)) keys.add(group.key);
    return keys;
  }

  /**
   * How the variant's topology constraints behave as the solve goes on:
   * - none: no constraint (its own, or other pods' anti-affinity selecting it);
   * - monotone: only anti-affinity and hostname spreads. Their counts only grow and a target's domains
   *   only narrow, so a target that turns the pod down once turns it down for good;
   * - dynamic: zone-like spreads (the global minimum rises) or affinity (a domain may get populated).
   */
  constraintKind(variant: PodVariant): 'none' | 'monotone' | 'dynamic' {
    const groups = [...this.ownedBy(variant), ...this.inverseSelectingGroup(variant.group)];
    if (groups.length === 0) return 'none';
    const monotone = groups.every(
      (g) => g.type === 'pod anti-affinity' || (g.type === 'topology spread' && g.key === HOSTNAME_KEY),
    );
    return monotone ? 'monotone' : 'dynamic';
  }

  /**
   * The target's requirements narrowed by every topology constraint on the pod, or the group that
   * cannot be satisfied there (Karpenter's Topology.AddRequirements).
   */
  addRequirements(
    variant: PodVariant,
    taints: readonly Taint[],
    nodeRequirements: RequirementMap,
  ): TopologyResult {
    let requirements: Map<string, ValueSet> | undefined;
    for (const groups of [this.ownedBy(variant), this.inverseSelectingGroup(variant.group)]) {
      for (const group of groups) {
        const podDomains = variant.strictRequirements.get(group.key) ?? EXISTS;
        const nodeDomains = nodeRequirements.get(group.key) ?? EXISTS;
        const domains = group.next(variant.group, podDomains, nodeDomains);
        if (domains === undefined) return { violated: group };
        const current = (requirements ?? nodeRequirements).get(group.key);
        const narrowed = current ? intersectDomains(current, domains) : domains;
        // Most placements do not narrow anything (a NodeClaim's own hostname, an already pinned zone):
        // copy the requirements only when they change.
        if (current && sameValueSet(current, narrowed)) continue;
        requirements ??= new Map(nodeRequirements);
        requirements.set(group.key, narrowed);
      }
    }
    return { requirements: requirements ?? nodeRequirements };
  }

  /** Counts a pod placed on a target with these taints and requirements (Karpenter's Topology.Record). */
  record(group: PodGroup, taints: readonly Taint[], requirements: RequirementMap): void {
    for (const topologyGroup of this.groups.values()) {
      if (topologyGroup.counts(group, taints, requirements)) topologyGroup.recordPlacement(requirements);
    }
    for (const [inverse, owners] of this.inverseOwners) {
      if (!owners.has(group.id)) continue;
      const set = requirements.get(inverse.key);
      if (set && !set.complement) for (const domain of set.values) inverse.record(domain);
    }
    this.placements.push({ group, taints, requirements });
  }

  private inverseSelectingGroup(group: PodGroup): TopologyGroup[] {
    let selecting = this.inverseSelecting.get(group.id);
    if (!selecting) {
      selecting = [...this.inverse.values()].filter((g) => g.selects(group));
      this.inverseSelecting.set(group.id, selecting);
    }
    return selecting;
  }

  private ownedBy(variant: PodVariant): TopologyGroup[] {
    let owned = this.owned.get(variant.id);
    if (owned) return owned;
    owned = [];
    const namespace = variant.group.namespace;
    for (const constraint of variant.spread) {
      owned.push(this.spreadGroup(variant, constraint));
    }
    for (const term of variant.affinity) {
      owned.push(this.groupFor(this.groups, 'pod affinity', term, namespace, undefined, undefined));
    }
    for (const term of variant.antiAffinity) {
      owned.push(this.groupFor(this.groups, 'pod anti-affinity', term, namespace, undefined, undefined));
    }
    this.owned.set(variant.id, owned);
    return owned;
  }

  private spreadGroup(variant: PodVariant, constraint: TopologySpreadConstraint): TopologyGroup {
    const labels = variant.group.labels;
    const selector = constraint.labelSelector
      ? {
          ...constraint.labelSelector,
          matchExpressions: [
            ...(constraint.labelSelector.matchExpressions ?? []),
            // matchLabelKeys: the pod's own values for these keys narrow the selector (kube-scheduler).
            ...(constraint.matchLabelKeys ?? [])
              .filter((key) => Object.hasOwn(labels, key))
              .map((key) => ({ key, operator: 'In' as const, values: [labels[key] ?? ''] })),
          ],
        }
      : undefined;
    const honorAffinity = constraint.nodeAffinityPolicy !== 'Ignore';
    const honorTaints = constraint.nodeTaintsPolicy === 'Honor';
    const filter: NodeFilter = {
      terms: honorAffinity ? variant.filterTerms : undefined,
      tolerations: honorTaints ? variant.tolerations : undefined,
    };
    const filterKey = JSON.stringify([
      honorAffinity ? variant.filterKey : '',
      honorTaints ? variant.tolerations : '',
    ]);
    return this.groupFor(
      this.groups,
      'topology spread',
      { topologyKey: constraint.topologyKey, ...(selector ? { labelSelector: selector } : {}) },
      variant.group.namespace,
      { maxSkew: constraint.maxSkew, minDomains: constraint.minDomains, filter, filterKey },
      honorTaints ? variant.tolerations : undefined,
    );
  }

  private groupFor(
    into: Map<string, TopologyGroup>,
    type: TopologyType,
    term: PodAffinityTerm,
    namespace: string,
    spread:
      { maxSkew: number; minDomains: number | undefined; filter: NodeFilter; filterKey: string } | undefined,
    tolerations: readonly Toleration[] | undefined,
  ): TopologyGroup {
    const namespaces = this.termNamespaces(term, namespace);
    const hash = JSON.stringify([
      type,
      term.topologyKey,
      namespaces,
      selectorKey(term.labelSelector),
      spread?.maxSkew ?? UNBOUNDED_SKEW,
      spread?.minDomains ?? null,
      spread?.filterKey ?? '',
    ]);
    const existing = into.get(hash);
    if (existing) return existing;
    const group = new TopologyGroup(
      type,
      term.topologyKey,
      new Set(namespaces),
      compileSelector(term.labelSelector),
      spread?.maxSkew ?? UNBOUNDED_SKEW,
      spread?.minDomains,
      spread?.filter,
    );
    this.initialize(group, tolerations, into === this.groups);
    into.set(hash, group);
    return group;
  }

  /** Registers the known domains and counts pods already bound and already placed by this solve. */
  private initialize(
    group: TopologyGroup,
    tolerations: readonly Toleration[] | undefined,
    countPods: boolean,
  ): void {
    for (const [domain, taintSets] of this.universe.get(group.key) ?? []) {
      if (!tolerations || taintSets.some((taints) => untoleratedTaint(taints, tolerations) === undefined)) {
        group.register(domain);
      }
    }
    for (const node of this.nodes) {
      if (!filterMatches(group.filter, node.taints, node.requirements)) continue;
      // Kubelet sets the hostname label; before it does, Karpenter counts the node's name instead.
      const domain = node.labels[group.key] ?? (group.key === HOSTNAME_KEY ? node.name : undefined);
      if (domain === undefined) continue;
      if (node.isNode) group.register(domain);
      if (!countPods) continue;
      for (const pod of node.pods) if (group.selectsLabels(pod.namespace, pod.labels)) group.record(domain);
    }
    if (!countPods) return;
    for (const placement of this.placements) {
      if (group.counts(placement.group, placement.taints, placement.requirements)) {
        group.recordPlacement(placement.requirements);
      }
    }
  }
}

function intersectDomains(current: ValueSet, domains: ValueSet): ValueSet {
  if (current.complement) {
    const values = new Set<string>();
    for (const value of domains.values) if (allows(current, value)) values.add(value);
    return { complement: false, values, allowsAbsent: false };
  }
  const values = new Set<string>();
  for (const value of domains.values) if (current.values.has(value)) values.add(value);
  return {
    complement: false,
    values,
    allowsAbsent: false,
    ...(current.minValues ? { minValues: current.minValues } : {}),
  };
}

/**
 * Domains the NodePools can offer per topology key (Karpenter's buildDomainGroups): every value of the
 * NodePool's In requirements and labels, and every value its compatible instance types can take
 * (zones and capacity types of their available offerings), each with the NodePool's taints.
 */
export function domainUniverse(
  templates: readonly {
    requirements: RequirementMap;
    taints: readonly Taint[];
    domainValues: () => Iterable<[string, string]>;
  }[],
): DomainUniverse {
  const universe: DomainUniverse = new Map();
  const insert = (key: string, domain: string, taints: readonly Taint[]) => {
    let domains = universe.get(key);
    if (!domains) universe.set(key, (domains = new Map()));
    const sets = domains.get(domain);
    // A domain offered without taints is reachable by every pod; other taint sets add nothing.
    if (!sets || taints.length === 0) domains.set(domain, [taints]);
    else if (sets[0]?.length !== 0) sets.push(taints);
  };
  for (const template of templates) {
    for (const [key, set] of template.requirements) {
      if (!set.complement) for (const value of set.values) insert(key, value, template.taints);
    }
    for (const [key, value] of template.domainValues()) insert(key, value, template.taints);
  }
  return universe;
}
