// The state of one solve: NodePool templates, existing nodes, NodeClaims opened so far, topology counts
// and the pod queue. solve.ts describes the algorithm and where it follows or departs from Karpenter.
import { compileDaemonSets, NO_DAEMONS, type CompiledDaemonSet } from './daemonsets.js';
import { compileExistingNode, type SimulatedNode } from './existing-nodes.js';
import { portsConflict } from './host-ports.js';
import type { PodExclusion } from '../explain/decision-record.js';
import {
  cheapestOffering,
  instanceTypeMismatch,
  offeredIgnoringAvailability,
  type CompiledInstanceType,
} from './instance-types.js';
import { describeRemaining, largestCapacity, optionsWithinLimits, subtractLargest } from './limits.js';
import { firstMinValuesShortfall, relaxMinValues } from './min-values.js';
import { NewClaim, finalizeClaim, type ClaimMember } from './new-claim.js';
import { ClaimQueue } from './claim-queue.js';
import { repackForCost, type Mobility } from './cost-packer.js';
import { compareQueued, PodCompiler, type HostPort, type PodVariant, type QueuedPod } from './pods.js';
import {
  incompatibility,
  labelMismatch,
  narrowedBy,
  sameRequirements,
  type RequirementMap,
} from './requirement-map.js';
import { addInto, fitsSum, type Resources } from './resources.js';
import {
  compareTemplates,
  compileTemplate,
  describeZonesAndCapacityTypes,
  type Rejection,
  type Template,
} from './templates.js';
import { describeTaint, untoleratedTaint } from './taints.js';
import { domainUniverse, HOSTNAME_KEY, Topology, type TopologyResult } from './topology.js';
import type {
  ExistingNode,
  NewNodeClaim,
  SchedulingInput,
  SchedulingResult,
  UnschedulablePod,
} from './types.js';
import { exactly, isUnsatisfiable, singleValue } from './value-set.js';

export const MAX_INSTANCE_TYPES = 600;

/** Why a pod was placed nowhere: the FailedScheduling text and, per NodePool asked, the cause. */
interface Failure {
  reason: string;
  causes: PodExclusion[];
  existingNodesFull?: number;
}

type Outcome = { ok: true } | ({ ok: false; final: boolean } & Failure);

/** A failure that is about the pod, or the lack of NodePools, rather than one NodePool. */
function failure(cause: 'InvalidPod' | 'NoNodePool', reason: string): Failure {
  return { reason, causes: [{ nodePool: '', cause, message: reason }] };
}

export class Simulation {
  private readonly templates: Template[];
  private readonly daemonSets: CompiledDaemonSet[];
  private readonly nodes: SimulatedNode[];
  private readonly claims = new ClaimQueue();
  private readonly compiler: PodCompiler;
  private readonly topology: Topology;
  private readonly unschedulable: UnschedulablePod[] = [];
  private readonly maxInstanceTypes: number;
  private readonly strictMinValues: boolean;
  /** Per topology-free variant: existing nodes before this index rejected it for good. */
  private readonly nodeCursor = new Map<number, number>();
  private readonly constraintKinds = new Map<number, 'none' | 'monotone' | 'dynamic'>();
  private readonly dependingKeys = new Map<number, ReadonlySet<string>>();
  private claimCount = 0;
  /** Per template, its limits' remainder before this solve: the cost packer charges its plan again. */
  private readonly limitsBefore: Map<Template, Resources | undefined>;

  constructor(private readonly input: SchedulingInput) {
    const cache = new Map<object, CompiledInstanceType | string>();
    this.daemonSets = compileDaemonSets(input.daemonSets ?? []);
    this.templates = input.nodePools
      .map((np) => compileTemplate(np, cache, this.daemonSets))
      .sort(compareTemplates);
    this.limitsBefore = new Map(this.templates.map((t) => [t, t.remaining && new Map(t.remaining)]));
    // Karpenter tries initialized nodes first, then by name (scheduler.go): the lowest index that fits wins.
    this.nodes = [...(input.existingNodes ?? [])]
      .sort(compareExistingNodes)
      .map((node) => compileExistingNode(node, this.daemonSets));
    const namespaceLabels = new Map((input.namespaces ?? []).map((ns) => [ns.name, ns.labels ?? {}]));
    this.topology = new Topology(domainUniverse(this.templates), this.nodes, namespaceLabels);
    const preferNoSchedule = this.templates.some((t) =>
      t.taints.some((taint) => taint.effect === 'PreferNoSchedule'),
    );
    this.compiler = new PodCompiler(
      { ignorePreferences: input.options?.preferencePolicy === 'Ignore' },
      preferNoSchedule,
    );
    this.maxInstanceTypes = input.options?.maxInstanceTypes ?? MAX_INSTANCE_TYPES;
    this.strictMinValues = input.options?.minValuesPolicy !== 'BestEffort';
    for (const node of this.nodes) {
      for (const pod of node.source.pods ?? []) {
        const terms = pod.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
        if (!terms?.length) continue;
        const labels = { ...node.labels, [HOSTNAME_KEY]: node.labels[HOSTNAME_KEY] ?? node.name };
        this.topology.addInverseAntiAffinity({ namespace: pod.namespace }, terms, labels);
      }
    }
  }

  run(): SchedulingResult {
    let queue = this.input.pods.map((pod) => this.compiler.queue(pod)).sort(compareQueued);
    const tracked = new Set<number>();
    for (const pod of queue) {
      const terms =
        pod.group.source.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
      if (!terms?.length || tracked.has(pod.group.id)) continue;
      tracked.add(pod.group.id);
      this.topology.addInverseAntiAffinity({ namespace: pod.group.namespace, groupId: pod.group.id }, terms);
    }
    const lastFailure = new Map<QueuedPod, Failure>();
    // Karpenter re-queues failed pods and stops when a full pass makes no progress.
    for (;;) {
      const retry: QueuedPod[] = [];
      let progressed = false;
      for (const pod of queue) {
        const outcome = this.scheduleSafely(pod);
        if (outcome.ok) progressed = true;
        else if (outcome.final) this.unschedulable.push(unschedulableOf(pod, outcome));
        else {
          lastFailure.set(pod, outcome);
          retry.push(pod);
        }
      }
      queue = retry;
      if (!progressed || queue.length === 0) break;
    }
    for (const pod of queue)
      this.unschedulable.push(
        unschedulableOf(pod, lastFailure.get(pod) ?? { reason: 'not scheduled', causes: [] }),
      );

    const newNodeClaims: NewNodeClaim[] = [];
    const packing = this.input.options?.packing ?? 'Cost';
    const firstFit = this.claims.inCreationOrder();
    const packed =
      packing === 'FirstFit'
        ? firstFit
        : repackForCost(firstFit, {
            maxInstanceTypes: this.maxInstanceTypes,
            noMoreNodeClaims: packing === 'CostWithoutMoreNodeClaims',
            limitsBefore: this.limitsBefore,
            mobility: (member, claim) => this.mobility(member, claim),
            nextHostname: () => ({ hostname: this.hostnameOf(this.claimCount), index: this.claimCount++ }),
          });
    for (const claim of packed) {
      const finalized = finalizeClaim(claim, this.maxInstanceTypes, this.strictMinValues);
      if ('claim' in finalized) newNodeClaims.push(finalized.claim);
      else {
        const causes: PodExclusion[] = [
          { nodePool: claim.template.name, cause: 'MinValues', message: finalized.reason },
        ];
        for (const pod of claim.pods) this.unschedulable.push({ pod, reason: finalized.reason, causes });
      }
    }
    return {
      newNodeClaims,
      existingPlacements: this.nodes.flatMap((node) =>
        node.placed.map((pod) => ({ pod, nodeName: node.name, kind: node.kind })),
      ),
      unschedulable: this.unschedulable,
    };
  }

  /**
   * One pod's attempt, never an exception: input the compilers did not anticipate fails that pod with
   * the error as its reason, and the rest of the batch is still scheduled.
   */
  private scheduleSafely(pod: QueuedPod): Outcome {
    try {
      return this.schedule(pod);
    } catch (error) {
      return {
        ok: false,
        final: true,
        ...failure('InvalidPod', `cannot simulate this pod: ${(error as Error).message}`),
      };
    }
  }

  private schedule(pod: QueuedPod): Outcome {
    const group = pod.group;
    if (group.error !== undefined || group.requests === undefined) {
      return {
        ok: false,
        final: true,
        ...failure('InvalidPod', `invalid pod: ${group.error ?? 'no requests'}`),
      };
    }
    // The pod as it asks first (no preference relaxed) is what the user reads about.
    let first: Failure = failure('NoNodePool', 'no NodePool');
    let final = true;
    for (let level = 0; ; level++) {
      const result = this.compiler.variant(group, level);
      if (result === undefined) break;
      if ('error' in result)
        return { ok: false, final: true, ...failure('InvalidPod', `invalid pod: ${result.error}`) };
      const variant = result.variant;
      if (this.place(pod, variant, group.requests, (f) => (first = level === 0 ? f : first)))
        return { ok: true };
      if (!this.rejectionsLast(variant)) final = false;
    }
    return { ok: false, final, ...first };
  }

  private constraintKind(variant: PodVariant): 'none' | 'monotone' | 'dynamic' {
    let kind = this.constraintKinds.get(variant.id);
    if (kind === undefined) {
      kind = this.topology.constraintKind(variant);
      this.constraintKinds.set(variant.id, kind);
    }
    return kind;
  }

  /** No affinity, spread or other pods' anti-affinity: topology can be skipped. */
  private isUnconstrained(variant: PodVariant): boolean {
    return this.constraintKind(variant) === 'none';
  }

  /**
   * A target that turns this variant down does so for good (see Topology.constraintKind), so the
   * rejection can be remembered and a failed pod is not retried.
   */
  private rejectionsLast(variant: PodVariant): boolean {
    return this.constraintKind(variant) !== 'dynamic';
  }

  private place(
    pod: QueuedPod,
    variant: PodVariant,
    requests: Resources,
    fail: (failure: Failure) => void,
  ): boolean {
    if (this.placeOnExistingNode(pod, variant, requests)) return true;
    const free = this.rejectionsLast(variant);
    for (const claim of this.claims.emptiestFirst()) {
      if (free && claim.rejected.has(variant.id)) continue;
      if (this.tryAdd(claim, pod, variant, requests)) {
        this.claims.grew(claim);
        return true;
      }
      if (free) claim.rejected.add(variant.id);
    }
    const causes: PodExclusion[] = [];
    for (const template of this.templates) {
      const rejection = this.openClaim(template, pod, variant, requests);
      if (rejection === undefined) return true;
      causes.push({ nodePool: template.name, cause: rejection.cause, message: rejection.reason });
    }
    if (this.templates.length === 0)
      causes.push({ nodePool: '', cause: 'NoNodePool', message: 'no NodePool can provision nodes' });
    const existing = this.nodes.length > 0 ? `no room on ${this.nodes.length} existing node(s); ` : '';
    const reasons = causes.map((c) =>
      c.nodePool === '' ? c.message : `nodepool "${c.nodePool}": ${c.message}`,
    );
    fail({
      reason: existing + reasons.join('; '),
      causes,
      ...(this.nodes.length > 0 && { existingNodesFull: this.nodes.length }),
    });
    return false;
  }

  private placeOnExistingNode(pod: QueuedPod, variant: PodVariant, requests: Resources): boolean {
    const free = this.rejectionsLast(variant);
    const start = free ? (this.nodeCursor.get(variant.id) ?? 0) : 0;
    for (let index = start; index < this.nodes.length; index++) {
      const node = this.nodes[index] as SimulatedNode;
      // Refused for this pod only: the cursor, shared by every pod of the variant, stays where it is.
      if (node.source.refusedPods?.has(pod.ref.uid)) continue;
      const requirements = this.fitsNode(node, variant, requests);
      if (requirements === undefined) {
        if (free && index === (this.nodeCursor.get(variant.id) ?? 0))
          this.nodeCursor.set(variant.id, index + 1);
        continue;
      }
      node.placed.push(pod.ref);
      addInto(node.used, requests);
      node.hostPorts.push(...variant.group.hostPorts);
      this.topology.record(variant.group, node.taints, requirements);
      return true;
    }
    return false;
  }

  /** The node's requirements narrowed by topology if the pod fits there, else undefined. */
  private fitsNode(
    node: SimulatedNode,
    variant: PodVariant,
    requests: Resources,
  ): RequirementMap | undefined {
    if (untoleratedTaint(node.taints, variant.tolerations)) return undefined;
    if (variant.group.hostPorts.length && portsConflict(node.hostPorts, variant.group.hostPorts))
      return undefined;
    if (!fitsSum(node.used, requests, undefined, node.allocatable)) return undefined;
    if (labelMismatch(node.labels, variant.requirements) !== undefined) return undefined;
    if (this.isUnconstrained(variant)) return node.requirements;
    const topology = this.topology.addRequirements(variant, node.taints, node.requirements);
    return satisfiable(topology);
  }

  /** Adds the pod to a NodeClaim opened in this solve if it still fits; otherwise changes nothing. */
  private tryAdd(claim: NewClaim, pod: QueuedPod, variant: PodVariant, requests: Resources): boolean {
    const template = claim.template;
    if (template.repels(variant) !== undefined) return false;
    if (!claim.mayFit(requests)) return false;
    const ports = variant.group.hostPorts;
    if (ports.length && portsConflict(claim.hostPorts, ports)) return false;
    if (variant.requirements.size > 0 && incompatibility(claim.requirements, variant.requirements))
      return false;
    let requirements: RequirementMap =
      variant.requirements.size > 0
        ? narrowedBy(claim.requirements, variant.requirements)
        : claim.requirements;
    if (!this.isUnconstrained(variant)) {
      const narrowed = satisfiable(this.topology.addRequirements(variant, template.taints, requirements));
      if (narrowed === undefined) return false;
      requirements = narrowed;
    }
    if (requirements !== claim.requirements && sameRequirements(requirements, claim.requirements)) {
      requirements = claim.requirements;
    }
    const changed = requirements !== claim.requirements;
    const sizeSafe = !ports.length && claim.fitsEveryOption(requests);
    const remaining =
      sizeSafe && !changed
        ? claim.instanceTypes
        : claim.instanceTypes.filter((it) => {
            if (
              !sizeSafe &&
              !fitsSum(claim.requests, requests, undefined, template.room.get(it) ?? it.allocatable)
            )
              return false;
            if (
              ports.length &&
              portsConflict((template.daemonOverhead.get(it) ?? NO_DAEMONS).hostPorts, ports)
            )
              return false;
            return (
              !changed ||
              (instanceTypeMismatch(it, requirements) === undefined &&
                cheapestOffering(it, requirements) !== undefined)
            );
          });
    if (remaining.length === 0) return false;
    // Under either policy: a NodeClaim BestEffort opened with its minValues lowered keeps to the lowered
    // ones, as Karpenter checks a pod joining an in-flight NodeClaim strictly.
    if (firstMinValuesShortfall(remaining, requirements) !== undefined) return false;
    claim.add({ ref: pod.ref, requests, variant }, requirements, remaining);
    this.topology.record(variant.group, template.taints, requirements);
    return true;
  }

  /**
   * Where the cost packer may move a pod: anywhere in its NodePool when no topology key depends on it;
   * only among NodeClaims with the same requirements when every key that does is pinned to one domain
   * on its NodeClaim and is not the hostname (a move then changes no domain's count); else nowhere.
   * A pod with host ports stays, so no port answer changes either.
   */
  private mobility(member: ClaimMember, claim: NewClaim): Mobility {
    if (member.variant.group.hostPorts.length > 0) return 'fixed';
    let keys = this.dependingKeys.get(member.variant.id);
    if (!keys)
      this.dependingKeys.set(member.variant.id, (keys = this.topology.keysDependingOn(member.variant)));
    if (keys.size === 0) return 'free';
    for (const key of keys) {
      const set = claim.requirements.get(key);
      if (key === HOSTNAME_KEY || set === undefined || singleValue(set) === undefined) return 'fixed';
    }
    return 'domain';
  }

  private hostnameOf(index: number): string {
    return `hostname-placeholder-${String(index).padStart(4, '0')}`;
  }

  /** Opens a NodeClaim from the template for the pod, or says why the template cannot take it. */
  private openClaim(
    template: Template,
    pod: QueuedPod,
    variant: PodVariant,
    requests: Resources,
  ): Rejection | undefined {
    if (template.error) return { cause: 'NodePoolNotReady', reason: template.error };
    const taint = template.repels(variant);
    if (taint) return { cause: 'Taint', reason: `did not tolerate taint ${describeTaint(taint)}` };
    const base = template.compatibleWith(variant);
    if ('reason' in base) return base;

    const hostname = this.hostnameOf(this.claimCount);
    let requirements: RequirementMap = new Map([...base.requirements, [HOSTNAME_KEY, exactly(hostname)]]);
    let candidates = base.instanceTypes;
    if (!this.isUnconstrained(variant)) {
      const topology = this.topology.addRequirements(variant, template.taints, requirements);
      if ('violated' in topology)
        return { cause: 'Topology', reason: `unsatisfiable ${topology.violated.describe()}` };
      const narrowed = satisfiable(topology);
      if (narrowed === undefined)
        return { cause: 'Topology', reason: 'topology constraints leave no domain the NodePool offers' };
      if (narrowed !== requirements) {
        requirements = narrowed;
        const inDomain = (it: CompiledInstanceType) => instanceTypeMismatch(it, narrowed) === undefined;
        candidates = candidates.filter((it) => inDomain(it) && cheapestOffering(it, narrowed) !== undefined);
        if (candidates.length === 0) {
          // The domain topology leaves is offered, only not available now: the offerings are the cause.
          const offered = base.instanceTypes.some(
            (it) => inDomain(it) && offeredIgnoringAvailability(it, narrowed),
          );
          return {
            cause: offered ? 'NoOffering' : 'Topology',
            reason: `topology leaves ${describeZonesAndCapacityTypes(narrowed)}, where no instance type has an available offering`,
          };
        }
      }
    }
    const ports = variant.group.hostPorts;
    const fitsPod = (it: CompiledInstanceType) =>
      !(ports.length && portsConflict((template.daemonOverhead.get(it) ?? NO_DAEMONS).hostPorts, ports)) &&
      fitsSum(requests, EMPTY_RESOURCES, undefined, template.room.get(it) ?? it.allocatable);
    // Identical pods fit the same options of the NodePool: computed once per variant unless topology
    // narrowed the candidates.
    const fitting =
      candidates === base.instanceTypes
        ? template.fittingFor(variant, () => candidates.filter(fitsPod))
        : candidates.filter(fitsPod);
    if (fitting.length === 0) return whyNothingFits(template, candidates, requests, ports);
    const limits = template.remaining;
    const withinLimits = optionsWithinLimits(fitting, limits);
    if (withinLimits.length === 0) {
      return {
        cause: 'Limit',
        reason: `all instance types exceed the NodePool's limits (${describeRemaining(limits)})`,
      };
    }
    const shortfall = firstMinValuesShortfall(withinLimits, requirements);
    if (shortfall !== undefined) {
      if (this.strictMinValues) return { cause: 'MinValues', reason: shortfall };
      // BestEffort: the NodeClaim opens with each minValues lowered to what its options have.
      requirements = relaxMinValues(withinLimits, requirements);
    }
    const claim = new NewClaim(template, hostname, requirements, withinLimits, this.claimCount++);
    claim.add({ ref: pod.ref, requests, variant }, requirements, withinLimits);
    this.claims.push(claim);
    this.topology.register(HOSTNAME_KEY, hostname);
    this.topology.record(variant.group, template.taints, requirements);
    // Karpenter subtracts pessimistically: the largest capacity among the NodeClaim's options.
    if (limits) subtractLargest(limits, largestCapacity(withinLimits));
    return undefined;
  }
}

/**
 * Why no option of the template has room for the pod, in the order the constraints bind: the size fits
 * some option beside its DaemonSets but their host ports are taken (HostPort); the pod fits an empty
 * node but not beside the DaemonSets (DaemonSetOverhead); or no option is big enough (Resources).
 */
function whyNothingFits(
  template: Template,
  candidates: readonly CompiledInstanceType[],
  requests: Resources,
  ports: readonly HostPort[],
): Rejection {
  const bySize = candidates.filter((it) =>
    fitsSum(requests, EMPTY_RESOURCES, undefined, template.room.get(it) ?? it.allocatable),
  );
  if (bySize.length > 0) {
    const taken = bySize
      .map((it) => portsConflict((template.daemonOverhead.get(it) ?? NO_DAEMONS).hostPorts, ports))
      .find((port) => port !== undefined);
    const port = taken
      ? `${taken.port}/${taken.protocol}`
      : ports.map((p) => `${p.port}/${p.protocol}`).join(', ');
    return {
      cause: 'HostPort',
      reason: `host port ${port} is taken by a DaemonSet on every instance type that fits`,
    };
  }
  const onEmptyNode = candidates.some((it) => fitsSum(requests, EMPTY_RESOURCES, undefined, it.allocatable));
  if (onEmptyNode) {
    return {
      cause: 'DaemonSetOverhead',
      reason: `the pod fits an empty node but not beside its DaemonSets (${template.shortfall(candidates, requests)})`,
    };
  }
  return {
    cause: 'Resources',
    reason: `no instance type has room for the pod (${template.shortfall(candidates, requests)})`,
  };
}

function unschedulableOf(pod: QueuedPod, failure: Failure): UnschedulablePod {
  return {
    pod: pod.ref,
    reason: failure.reason,
    causes: failure.causes,
    ...(failure.existingNodesFull !== undefined && { existingNodesFull: failure.existingNodesFull }),
  };
}

function compareExistingNodes(a: ExistingNode, b: ExistingNode): number {
  const ready = (node: ExistingNode) => (node.initialized === false ? 1 : 0);
  return ready(a) - ready(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

function satisfiable(result: TopologyResult): RequirementMap | undefined {
  if ('violated' in result) return undefined;
  for (const set of result.requirements.values()) if (isUnsatisfiable(set)) return undefined;
  return result.requirements;
}

const EMPTY_RESOURCES: Resources = new Map();
