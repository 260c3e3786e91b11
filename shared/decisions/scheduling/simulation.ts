// The state of one solve: templates, existing nodes, NodeClaims opened so far, and the pod queue.
import { WellKnown } from '../../models/karpenter.js';
import type { NodeSelectorRequirement } from '../../models/kube.js';
import { cheapestOffering, instanceTypeMismatch, type CompiledInstanceType } from './instance-types.js';
import { compareQueued, PodCompiler, type PodVariant, type QueuedPod } from './pods.js';
import {
  incompatibility,
  isWellKnownLabel,
  labelMismatch,
  mergeRequirements,
  type RequirementMap,
} from './requirement-map.js';
import { addInto, fits, formatAmount, shortfall, sum, toResourceList, type Resources } from './resources.js';
import { compareTemplates, compileTemplate, type Template } from './templates.js';
import { describeTaint, untoleratedTaint } from './taints.js';
import type {
  ExistingNode,
  NewNodeClaim,
  PodReference,
  SchedulingInput,
  SchedulingResult,
  UnschedulablePod,
} from './types.js';
import { exactly, singleValue, toRequirements } from './value-set.js';
import { compileExistingNode, type SimulatedNode } from './existing-nodes.js';

export const MAX_INSTANCE_TYPES = 600;
const HOSTNAME = 'kubernetes.io/hostname';

/** A NodeClaim opened during this solve. */
interface OpenClaim {
  readonly template: Template;
  requirements: RequirementMap;
  instanceTypes: CompiledInstanceType[];
  /** Sum of the pods' requests. */
  readonly requests: Resources;
  readonly pods: PodReference[];
  readonly hostname: string;
}

type Attempt = { ok: true } | { ok: false; reason: string };

export class Simulation {
  private readonly templates: Template[];
  private readonly nodes: SimulatedNode[];
  private readonly claims: OpenClaim[] = [];
  private readonly compiler: PodCompiler;
  private readonly unschedulable: UnschedulablePod[] = [];
  private readonly maxInstanceTypes: number;

  constructor(private readonly input: SchedulingInput) {
    const cache = new Map<object, CompiledInstanceType | string>();
    this.templates = input.nodePools.map((np) => compileTemplate(np, cache)).sort(compareTemplates);
    this.nodes = (input.existingNodes ?? []).map((node: ExistingNode) => compileExistingNode(node));
    const preferNoSchedule = this.templates.some((t) =>
      t.taints.some((taint) => taint.effect === 'PreferNoSchedule'),
    );
    this.compiler = new PodCompiler(
      { ignorePreferences: input.options?.preferencePolicy === 'Ignore' },
      preferNoSchedule,
    );
    this.maxInstanceTypes = input.options?.maxInstanceTypes ?? MAX_INSTANCE_TYPES;
  }

  run(): SchedulingResult {
    let queue = this.input.pods.map((pod) => this.compiler.queue(pod)).sort(compareQueued);
    const lastReason = new Map<QueuedPod, string>();
    // Karpenter re-queues failed pods and stops when a full pass makes no progress.
    for (;;) {
      const retry: QueuedPod[] = [];
      let progressed = false;
      for (const pod of queue) {
        const outcome = this.schedule(pod);
        if (outcome.ok) {
          progressed = true;
          continue;
        }
        if (outcome.final) {
          this.unschedulable.push({ pod: pod.ref, reason: outcome.reason });
        } else {
          lastReason.set(pod, outcome.reason);
          retry.push(pod);
        }
      }
      queue = retry;
      if (!progressed || queue.length === 0) break;
    }
    for (const pod of queue)
      this.unschedulable.push({ pod: pod.ref, reason: lastReason.get(pod) ?? 'not scheduled' });
    return {
      newNodeClaims: this.claims.map((claim) => this.finalize(claim)).filter((c) => c !== undefined),
      existingPlacements: this.nodes.flatMap((node) =>
        node.placed.map((pod) => ({ pod, nodeName: node.name, kind: node.kind })),
      ),
      unschedulable: this.unschedulable,
    };
  }

  private schedule(pod: QueuedPod): { ok: true } | { ok: false; final: boolean; reason: string } {
    const group = pod.group;
    if (group.error !== undefined || group.requests === undefined) {
      return { ok: false, final: true, reason: `invalid pod: ${group.error ?? 'no requests'}` };
    }
    let reason = 'no NodePool';
    for (let level = 0; ; level++) {
      const result = this.compiler.variant(group, level);
      if (result === undefined) break;
      if ('error' in result) return { ok: false, final: true, reason: `invalid pod: ${result.error}` };
      const attempt = this.place(pod, result.variant, group.requests);
      if (attempt.ok) return { ok: true };
      if (level === 0) reason = attempt.reason;
    }
    return { ok: false, final: group.topologyFree, reason };
  }

  private place(pod: QueuedPod, variant: PodVariant, requests: Resources): Attempt {
    for (const node of this.nodes) {
      if (this.fitsNode(node, variant, requests)) {
        node.placed.push(pod.ref);
        addInto(node.used, requests);
        return { ok: true };
      }
    }
    // The emptiest open NodeClaim first, as Karpenter re-sorts in-flight NodeClaims by pod count.
    const open = [...this.claims].sort((a, b) => a.pods.length - b.pods.length);
    for (const claim of open) {
      if (this.addToClaim(claim, pod, variant, requests) === undefined) return { ok: true };
    }
    const reasons: string[] = [];
    for (const template of this.templates) {
      const reason = this.openClaim(template, pod, variant, requests);
      if (reason === undefined) return { ok: true };
      reasons.push(`nodepool "${template.name}": ${reason}`);
    }
    if (this.templates.length === 0) reasons.push('no NodePool can provision nodes');
    const existing =
      this.nodes.length > 0 ? `did not fit any of ${this.nodes.length} existing node(s); ` : '';
    return { ok: false, reason: existing + reasons.join('; ') };
  }

  private fitsNode(node: SimulatedNode, variant: PodVariant, requests: Resources): boolean {
    if (untoleratedTaint(node.taints, variant.tolerations)) return false;
    if (labelMismatch(node.labels, variant.requirements) !== undefined) return false;
    return fits(sum(node.used, requests), node.allocatable);
  }

  /** Adds the pod to an open NodeClaim if it fits; otherwise returns why not and changes nothing. */
  private addToClaim(
    claim: OpenClaim,
    pod: QueuedPod,
    variant: PodVariant,
    requests: Resources,
  ): string | undefined {
    const taint = untoleratedTaint(claim.template.taints, variant.tolerations);
    if (taint) return `did not tolerate taint ${describeTaint(taint)}`;
    const incompatible = incompatibility(claim.requirements, variant.requirements);
    if (incompatible) return `incompatible requirements: ${incompatible}`;
    const requirements = mergeRequirements(claim.requirements, variant.requirements);
    const total = sum(claim.requests, requests);
    const remaining = claim.instanceTypes.filter(
      (it) =>
        fits(total, it.allocatable) &&
        instanceTypeMismatch(it, requirements) === undefined &&
        cheapestOffering(it, requirements) !== undefined,
    );
    if (remaining.length === 0) return 'no instance type fits';
    claim.requirements = requirements;
    claim.instanceTypes = remaining;
    addInto(claim.requests, requests);
    claim.pods.push(pod.ref);
    return undefined;
  }

  private openClaim(
    template: Template,
    pod: QueuedPod,
    variant: PodVariant,
    requests: Resources,
  ): string | undefined {
    if (template.error) return template.error;
    const taint = untoleratedTaint(template.taints, variant.tolerations);
    if (taint) return `did not tolerate taint ${describeTaint(taint)}`;
    const incompatible = incompatibility(template.requirements, variant.requirements);
    if (incompatible) return `incompatible requirements, ${incompatible}`;
    const hostname = `hostname-placeholder-${String(this.claims.length).padStart(4, '0')}`;
    const requirements = mergeRequirements(template.requirements, variant.requirements);
    (requirements as Map<string, ReturnType<typeof exactly>>).set(HOSTNAME, exactly(hostname));

    const compatible = template.instanceTypes.filter(
      (it) => instanceTypeMismatch(it, requirements) === undefined,
    );
    if (compatible.length === 0) {
      return `no instance type satisfies the requirements${this.firstMismatch(template, requirements)}`;
    }
    const offered = compatible.filter((it) => cheapestOffering(it, requirements) !== undefined);
    if (offered.length === 0) return 'no available offering matches the zone and capacity-type requirements';
    const fitting = offered.filter((it) => fits(requests, it.allocatable));
    if (fitting.length === 0)
      return `no instance type has room for the pod (${this.largestShortfall(offered, requests)})`;
    const remaining = template.remaining;
    const withinLimits = remaining ? fitting.filter((it) => this.withinLimits(it, remaining)) : fitting;
    if (withinLimits.length === 0)
      return `all instance types exceed the NodePool's remaining limits (${this.describeRemaining(remaining)})`;

    const claim: OpenClaim = {
      template,
      requirements,
      instanceTypes: withinLimits,
      requests: new Map(requests),
      pods: [pod.ref],
      hostname,
    };
    this.claims.push(claim);
    // Karpenter subtracts pessimistically: the largest capacity among the NodeClaim's options.
    if (remaining) this.subtractLargest(remaining, withinLimits);
    return undefined;
  }

  private withinLimits(instanceType: CompiledInstanceType, remaining: Resources): boolean {
    for (const [name, left] of remaining) if ((instanceType.capacity.get(name) ?? 0) > left) return false;
    return true;
  }

  private subtractLargest(remaining: Resources, options: readonly CompiledInstanceType[]): void {
    for (const name of [...remaining.keys()]) {
      let largest = 0;
      for (const it of options) largest = Math.max(largest, it.capacity.get(name) ?? 0);
      remaining.set(name, (remaining.get(name) ?? 0) - largest);
    }
  }

  private describeRemaining(remaining: Resources | undefined): string {
    if (!remaining) return 'none';
    return [...remaining]
      .map(([name, left]) => `${name} ${left <= 0 ? '0' : formatAmount(name, left)} left`)
      .join(', ');
  }

  private firstMismatch(template: Template, requirements: RequirementMap): string {
    const counts = new Map<string, number>();
    for (const it of template.instanceTypes) {
      const key = instanceTypeMismatch(it, requirements);
      if (key) counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const [key] = [...counts].sort((a, b) => b[1] - a[1])[0] ?? [];
    if (key === undefined) return '';
    const wanted = toRequirements(key, requirements.get(key) ?? exactly())
      .map((r) => `${r.key} ${r.operator} ${JSON.stringify(r.values ?? [])}`)
      .join(', ');
    return ` (${wanted} matches none of ${template.instanceTypes.length} instance types)`;
  }

  private largestShortfall(instanceTypes: readonly CompiledInstanceType[], requests: Resources): string {
    for (const [name, amount] of requests) {
      let largest = 0;
      for (const it of instanceTypes) largest = Math.max(largest, it.allocatable.get(name) ?? 0);
      if (amount > largest) {
        return `${name} request ${formatAmount(name, amount)} exceeds the largest allocatable ${formatAmount(name, largest)}`;
      }
    }
    return `no single instance type fits ${shortfall(requests, new Map()) ?? 'all requests'} together`;
  }

  private finalize(claim: OpenClaim): NewNodeClaim | undefined {
    const priced = claim.instanceTypes
      .map((it) => ({ it, price: cheapestOffering(it, claim.requirements)?.price ?? Infinity }))
      .sort((a, b) => a.price - b.price || (a.it.name < b.it.name ? -1 : a.it.name > b.it.name ? 1 : 0))
      .slice(0, this.maxInstanceTypes);
    const names = priced.map((p) => p.it.name);
    const requirements: NodeSelectorRequirement[] = [];
    const capacityTypes = new Set<string>();
    for (const { it } of priced) {
      for (const offering of it.offerings) {
        if (cheapestOffering({ ...it, offerings: [offering] }, claim.requirements))
          capacityTypes.add(offering.capacityType);
      }
    }
    const labels: Record<string, string> = { ...claim.template.labels };
    for (const [key, set] of claim.requirements) {
      if (key === HOSTNAME || key === WellKnown.instanceTypeLabel || key === WellKnown.capacityTypeLabel)
        continue;
      requirements.push(...toRequirements(key, set));
      const single = singleValue(set);
      if (single !== undefined && !isWellKnownLabel(key)) labels[key] = single;
    }
    const instanceTypeMin = claim.requirements.get(WellKnown.instanceTypeLabel)?.minValues;
    requirements.push({
      key: WellKnown.instanceTypeLabel,
      operator: 'In',
      values: names,
      ...(instanceTypeMin !== undefined ? { minValues: instanceTypeMin } : {}),
    });
    requirements.push({
      key: WellKnown.capacityTypeLabel,
      operator: 'In',
      values: [...capacityTypes].sort(),
    });
    return {
      nodePoolName: claim.template.name,
      requirements,
      instanceTypeNames: names,
      requests: toResourceList(claim.requests),
      labels,
      pods: claim.pods,
      cheapestPrice: priced[0]?.price ?? Infinity,
    };
  }
}
