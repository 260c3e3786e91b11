// "What would this change do", answered from the cluster as it is now, before anything is applied: pods
// to add, or a changed NodePool or AKSNodeClass. The answer is computed the way the app itself would
// decide, by the same functions: a provisioning window's read and solve (provisioning/cluster-state.ts,
// solve-input.ts, the scheduling solve) with the pods added as pending; the sweep's drift judgement
// (decisions/drift.ts evaluateDrift after the cloud provider's isDrifted) against the changed objects,
// the Drifted budget (decisions/budgets.ts) and the rollout's waves (decisions/explain/drift-waves.ts);
// and the consolidation methods' pure decisions (decisions/consolidation/) on the changed NodePools. A
// prediction that used its own arithmetic could disagree with what then happens; this one cannot, but
// for what it names in `notComputed` and `notes`.
//
// It never writes: the write ports of what it calls (Kubernetes objects, Events, the cloud provider's VMs
// and its memory of failures and unavailable offerings) are replaced by ones that throw, so a write would
// fail the answer rather than change the cluster.
import type { V1Pod } from '@kubernetes/client-node';
import type { CloudProvider } from '../../cloudprovider/types.js';
import { budgetNodesOf, isDisrupting } from '../../decisions/disruption-state.js';
import { isConditionTrue } from '../../decisions/conditions.js';
import {
  evaluateCandidates,
  podsBlockDisruption,
  selectEmpty,
  type Candidate,
} from '../../decisions/consolidation/candidates.js';
import {
  multiNodeConsolidation,
  orderCandidates,
  singleNodeConsolidation,
  type UnderutilizedCommand,
} from '../../decisions/consolidation/underutilized.js';
import { allowedDisruptions } from '../../decisions/budgets.js';
import { evaluateDrift } from '../../decisions/drift.js';
import {
  driftBudgetOf,
  driftWaves,
  type DriftBudget,
  type DriftWavePlan,
} from '../../decisions/explain/drift-waves.js';
import { isManagedNodePool } from '../../decisions/ownership.js';
import { plainEqual } from '../../decisions/plain-equal.js';
import { priceOf } from '../../decisions/prices/price-book.js';
import {
  isRolloutPaused,
  RolloutAnnotations,
  rolloutOf,
  rolloutPolicyOf,
  rolloutTargetOf,
  type RolloutPolicy,
} from '../../decisions/rollout.js';
import {
  cheapestOffering,
  compileInstanceType,
  instanceTypeMismatch,
} from '../../decisions/scheduling/instance-types.js';
import { requirementMapOf } from '../../decisions/scheduling/requirement-map.js';
import {
  solve,
  type InstanceType,
  type SchedulingInput,
  type SchedulingResult,
} from '../../decisions/scheduling/index.js';
import type { EventRecorder } from '../../kube/events.js';
import type { KarpenterObjects } from '../../kube/custom-objects.js';
import { toConsolidationPod } from '../../kube/pods.js';
import type { AKSNodeClass } from '../../models/aks-node-class.js';
import { ConditionTypes, WellKnown, type NodeClaim, type NodePool } from '../../models/karpenter.js';
import type { Node } from '../../models/kube.js';
import { SweepView } from '../cluster/snapshot.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { readClusterPods, nodeInputsOf, type ClusterPods } from '../disruption/cluster-pods.js';
import { heldConsolidationCommands } from '../disruption/command-memory.js';
import { consolidates, consolidatesUnderutilized } from '../disruption/methods/consolidation-pass.js';
import { nodeClaimsByPool, nodePoolsInScope } from '../disruption/scope.js';
import { nodesWithNodeClaims, underutilizedInput } from '../disruption/underutilized-input.js';
import { realPodsOnly, windowBuffers, withVirtualPods } from '../provisioning/buffers.js';
import { readProvisioningState, type ProvisioningState } from '../provisioning/cluster-state.js';
import { solveInput } from '../provisioning/solve-input.js';
import { instanceTypeCatalog, type Catalog } from '../provisioning/instance-type-catalog.js';

/** An object `whatIf` cannot take; the message names its index and kind. */
export class WhatIfInputError extends Error {
  override readonly name = 'WhatIfInputError';
}

/** A write attempted while answering: a bug, since the answer must change nothing. */
export class WhatIfWriteError extends Error {
  override readonly name = 'WhatIfWriteError';
}

const NODEPOOL_API_VERSION = 'karpenter.sh/v1';
const NODECLASS_API_VERSIONS: readonly string[] = [
  'karpenter.azure.com/v1beta1',
  'karpenter.azure.com/v1alpha2',
];

/** USD/h; null when a price is unknown (JSON has no Infinity). */
export type Price = number | null;

export interface WhatIfChange {
  kind: 'Pod' | 'NodePool' | 'AKSNodeClass';
  name: string;
  namespace?: string;
  /** The object does not exist yet (for a Pod: always). */
  created: boolean;
}

export interface WhatIfLaunch {
  nodePool: string;
  /** The instance types the NodeClaim would allow, cheapest first (at most 10 listed). */
  instanceTypes: string[];
  instanceTypeCount: number;
  /** The offering launch would try first: the cheapest available one its requirements allow. */
  cheapest?: { instanceType: string; zone: string; capacityType: string };
  /** Zones its instance types have an available offering in, under its requirements. */
  zones: string[];
  pricePerHour: Price;
  /** Its pods, namespace/name; the what-if pods among them are listed in `whatIfPods` too. */
  pods: string[];
  whatIfPods: string[];
}

export type WhatIfPodPlacement =
  | { pod: string; on: 'new'; launch: number }
  | { pod: string; on: 'Node' | 'NodeClaim'; name: string }
  | { pod: string; on: 'nowhere'; reason: string };

export interface WhatIfPods {
  /** Every NodeClaim the next provisioning window would create with the pods added (pending ones too). */
  launches: WhatIfLaunch[];
  placements: WhatIfPodPlacement[];
  /** The window's new NodeClaims without the pods, and with them. */
  pricePerHour: { before: Price; after: Price };
}

export interface WhatIfDriftNode {
  nodeClaim: string;
  node?: string;
  reason: string;
  message: string;
  /** Drifted=True already, before the change. */
  alreadyDrifted: boolean;
  /** Being disrupted now: not counted in the waves. */
  disrupting: boolean;
  /** Why its pods hold it back (do-not-disrupt, a PDB), when they do: drift waits for them. */
  blockedBy?: string;
  instanceType?: string;
  pricePerHour: Price;
}

export interface WhatIfDrift {
  nodePool: string;
  nodeClass?: string;
  policy: RolloutPolicy;
  /** NodeClaims of the pool that would be Drifted under the change (alreadyDrifted tells the old ones). */
  nodes: WhatIfDriftNode[];
  /** The pool's launched NodeClaims judged. */
  judged: number;
  budget: DriftBudget;
  /** The waves the drifted nodes not yet disrupting would be replaced in. */
  plan: DriftWavePlan;
  /** What one replacement from the changed template would launch as (launch's cheapest offering). */
  replacement?: { instanceType: string; zone: string; capacityType: string; pricePerHour: Price };
  /** Why no replacement could launch, when none can. */
  replacementProblem?: string;
  /** The drifted nodes' prices now, and their replacements'. */
  pricePerHour: { before: Price; after: Price };
}

export type WhatIfConsolidation =
  | {
      nodePool: string;
      method: 'emptiness' | 'multi-node-consolidation' | 'single-node-consolidation';
      decision: 'delete' | 'replace';
      nodes: string[];
      replacementInstanceTypes?: string[];
      savingsPerHour: Price;
    }
  | { nodePool: string; method: 'none'; why: string; blocked: { node: string; why: string }[] };

export interface WhatIfAnswer {
  /** When the cluster was read. */
  at: string;
  changes: WhatIfChange[];
  /** Present when pods were given. */
  pods?: WhatIfPods;
  /** Per NodePool whose own spec or AKSNodeClass changed. */
  drift: WhatIfDrift[];
  /** Per NodePool the consolidation methods would act on now, with the changes. */
  consolidation: WhatIfConsolidation[];
  /** What the answer does not say, and why. */
  notComputed: string[];
  /** How figures were taken. */
  notes: string[];
}

interface Changes {
  pods: V1Pod[];
  nodePools: NodePool[];
  nodeClasses: AKSNodeClass[];
  described: WhatIfChange[];
}

type Manifest = Record<string, unknown>;

const isRecord = (value: unknown): value is Manifest =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function describeKind(object: Manifest): string {
  const kind = typeof object.kind === 'string' ? object.kind : '(no kind)';
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '(no apiVersion)';
  return `${kind} ${apiVersion}`;
}

function nameOf(object: Manifest, index: number): string {
  const metadata = isRecord(object.metadata) ? object.metadata : {};
  if (typeof metadata.name !== 'string' || metadata.name === '') {
    throw new WhatIfInputError(`objects[${index}]: ${describeKind(object)} has no metadata.name`);
  }
  return metadata.name;
}

function parseChanges(objects: readonly unknown[]): Changes {
  const changes: Changes = { pods: [], nodePools: [], nodeClasses: [], described: [] };
  const seen = new Set<string>();
  objects.forEach((object, index) => {
    if (!isRecord(object)) throw new WhatIfInputError(`objects[${index}]: not an object`);
    const where = `objects[${index}] (${describeKind(object)})`;
    const spec = isRecord(object.spec) ? object.spec : undefined;
    if (object.kind === 'Pod' && object.apiVersion === 'v1') {
      const name = nameOf(object, index);
      if (!spec || !Array.isArray(spec.containers))
        throw new WhatIfInputError(`${where}: spec.containers is required`);
      const metadata = isRecord(object.metadata) ? object.metadata : {};
      const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : 'default';
      const pod = object as V1Pod;
      changes.pods.push({
        ...pod,
        metadata: { ...pod.metadata, name, namespace, uid: pod.metadata?.uid ?? `what-if-${index}` },
        spec: { ...pod.spec, containers: pod.spec?.containers ?? [], nodeName: undefined },
        status: { phase: 'Pending' },
      });
      changes.described.push({ kind: 'Pod', name, namespace, created: true });
      return;
    }
    if (object.kind === 'NodePool' && object.apiVersion === NODEPOOL_API_VERSION) {
      const name = nameOf(object, index);
      const template =
        isRecord(spec?.template) && isRecord(spec.template.spec) ? spec.template.spec : undefined;
      if (!template || !isRecord(template.nodeClassRef) || typeof template.nodeClassRef.name !== 'string') {
        throw new WhatIfInputError(`${where}: spec.template.spec.nodeClassRef.name is required`);
      }
      if (!Array.isArray(template.requirements)) {
        throw new WhatIfInputError(`${where}: spec.template.spec.requirements is required`);
      }
      if (seen.has(`NodePool/${name}`))
        throw new WhatIfInputError(`${where}: NodePool ${name} is given twice`);
      seen.add(`NodePool/${name}`);
      changes.nodePools.push(object as unknown as NodePool);
      changes.described.push({ kind: 'NodePool', name, created: false });
      return;
    }
    if (
      object.kind === 'AKSNodeClass' &&
      typeof object.apiVersion === 'string' &&
      NODECLASS_API_VERSIONS.includes(object.apiVersion)
    ) {
      const name = nameOf(object, index);
      if (!spec) throw new WhatIfInputError(`${where}: spec is required`);
      if (seen.has(`AKSNodeClass/${name}`))
        throw new WhatIfInputError(`${where}: AKSNodeClass ${name} is given twice`);
      seen.add(`AKSNodeClass/${name}`);
      changes.nodeClasses.push(object as unknown as AKSNodeClass);
      changes.described.push({ kind: 'AKSNodeClass', name, created: false });
      return;
    }
    throw new WhatIfInputError(
      `${where}: only a Pod (v1), a NodePool (${NODEPOOL_API_VERSION}) or an AKSNodeClass ` +
        `(${NODECLASS_API_VERSIONS.join(' or ')}) can be asked about`,
    );
  });
  return changes;
}

/** The live object's metadata with the manifest's labels and annotations over it, the manifest's spec. */
function overlaid<T extends NodePool | AKSNodeClass>(manifest: T, live: T | undefined): T {
  if (!live) {
    const { status: _status, ...rest } = manifest;
    return { ...rest, metadata: { ...manifest.metadata } } as T;
  }
  return {
    ...live,
    metadata: {
      ...live.metadata,
      labels: { ...live.metadata.labels, ...manifest.metadata.labels },
      annotations: { ...live.metadata.annotations, ...manifest.metadata.annotations },
    },
    spec: manifest.spec,
  };
}

const throwing = (what: string) => (): never => {
  throw new WhatIfWriteError(`what-if must not write, but tried to ${what}`);
};

function readOnlyObjects(objects: KarpenterObjects): KarpenterObjects {
  const guard = <T extends object>(store: T, kind: string): T =>
    Object.assign(Object.create(store) as T, {
      create: throwing(`create a ${kind}`),
      mergePatch: throwing(`patch a ${kind}`),
      jsonPatch: throwing(`patch a ${kind}`),
      mergePatchStatus: throwing(`patch a ${kind}'s status`),
      delete: throwing(`delete a ${kind}`),
    });
  return {
    nodeClaims: guard(objects.nodeClaims, 'NodeClaim'),
    nodePools: guard(objects.nodePools, 'NodePool'),
    nodeClasses: guard(objects.nodeClasses, 'AKSNodeClass'),
  };
}

/** The dependencies with every write port the answer could reach throwing. */
function readOnly(deps: LifecycleDependencies): LifecycleDependencies {
  const events: EventRecorder<never> = {
    warning: throwing('record an Event'),
    normal: throwing('record an Event'),
  };
  const cloud: CloudProvider = Object.assign(Object.create(deps.cloud) as CloudProvider, {
    create: throwing('create a VM'),
    delete: throwing('delete a VM'),
    reboot: throwing('reboot a VM'),
    markUnavailable: throwing('remember an unavailable offering'),
    rememberLaunchFailure: throwing('remember a launch failure'),
    rememberPreemption: throwing('remember a preemption'),
  });
  return { ...deps, objects: readOnlyObjects(deps.objects), events, cloud };
}

/** The objects an answer substitutes: the changed NodePools and AKSNodeClasses, as they would be. */
interface Substitution {
  nodePools: Map<string, NodePool>;
  nodeClasses: Map<string, AKSNodeClass>;
}

function substituted<T extends { metadata: { name: string } }>(
  live: readonly T[],
  changed: Map<string, T>,
): T[] {
  const names = new Set(live.map((o) => o.metadata.name));
  return [
    ...live.map((o) => changed.get(o.metadata.name) ?? o),
    ...[...changed.values()].filter((o) => !names.has(o.metadata.name)),
  ];
}

export async function whatIf(
  deps: LifecycleDependencies,
  objects: readonly unknown[],
): Promise<WhatIfAnswer> {
  const changes = parseChanges(objects);
  const safe = readOnly(deps);
  const notComputed: string[] = [];
  const notes: string[] = [];

  // One read, as a provisioning window makes it (fresh from the API server, nodes before pods).
  const live = await readProvisioningState(safe);
  const at = safe.now();
  const liveClasses = new Map(live.nodeClasses.map((c) => [c.metadata.name, c]));
  const livePools = new Map(live.nodePools.map((p) => [p.metadata.name, p]));
  for (const change of changes.described) {
    if (change.kind === 'NodePool') change.created = !livePools.has(change.name);
    if (change.kind === 'AKSNodeClass') change.created = !liveClasses.has(change.name);
  }

  const substitution: Substitution = { nodePools: new Map(), nodeClasses: new Map() };
  for (const manifest of changes.nodePools) {
    substitution.nodePools.set(
      manifest.metadata.name,
      overlaid(manifest, livePools.get(manifest.metadata.name)),
    );
  }
  for (const manifest of changes.nodeClasses) {
    const before = liveClasses.get(manifest.metadata.name);
    const after = overlaid(manifest, before);
    substitution.nodeClasses.set(manifest.metadata.name, await withStatus(safe, after, before, notComputed));
  }
  const state: ProvisioningState = {
    ...live,
    nodePools: substituted(live.nodePools, substitution.nodePools),
    nodeClasses: substituted(live.nodeClasses, substitution.nodeClasses),
  };

  const catalog = await instanceTypeCatalog(safe, state);
  const answer: WhatIfAnswer = {
    at: at.toISOString(),
    changes: changes.described,
    drift: [],
    consolidation: [],
    notComputed,
    notes,
  };
  if (changes.pods.length > 0) answer.pods = await podLaunches(safe, state, changes.pods, catalog);

  const view = new SweepView({ readAt: at, ...state });
  const clusterPods = await readClusterPods(safe);
  const affected = state.nodePools.filter(
    (p) =>
      isManagedNodePool(p) &&
      (substitution.nodePools.has(p.metadata.name) ||
        substitution.nodeClasses.has(p.spec.template.spec.nodeClassRef.name)),
  );
  for (const nodePool of affected) {
    answer.drift.push(driftOf(safe, { nodePool, notComputed, state, view, pods: clusterPods, catalog, at }));
  }

  const withPods: ClusterPods = {
    ...clusterPods,
    pending: [...clusterPods.pending, ...changes.pods.map(toConsolidationPod)],
  };
  answer.consolidation = await consolidationOf(safe, { view, pods: withPods, substitution, at });

  notComputed.push(
    'how long a Canary rollout takes: each wave soaks ROLLOUT_SOAK_SECONDS and its health gates judge the new nodes, which only the rollout itself can',
    'consolidation after the drift replacements: consolidation is judged on the nodes as they are now',
  );
  notes.push(
    "budgets are judged at this moment (a scheduled budget may allow otherwise later); percentages of today's node count",
    "a replacement is priced at the cheapest available offering the NodePool's requirements allow, the one launch tries first",
    "the changed objects keep the live objects' labels and annotations not given in the manifest, as kubectl apply would",
  );
  if (answer.drift.some((d) => d.policy === 'Immediate' && d.plan.kind === 'waves')) {
    notes.push(
      'under Immediate the budget is refilled as each replacement finishes, so the waves are budget-fulls: never more than one wave disrupting at once, and the rollout takes at most as many replacement times as there are waves',
    );
  }
  if (answer.consolidation.length > 0) {
    notes.push(
      'consolidation is decided as by one sweep now (emptiness, then multi-node, then single-node); a NodePool whose consolidation command is already running waits for it',
    );
  }
  return answer;
}

/**
 * A changed AKSNodeClass's status: the live one while its spec is unchanged, else the one the cloud
 * provider would write for it (its effective images and Kubernetes version), read-only.
 */
async function withStatus(
  deps: LifecycleDependencies,
  after: AKSNodeClass,
  before: AKSNodeClass | undefined,
  notComputed: string[],
): Promise<AKSNodeClass> {
  if (before && plainEqual(before.spec, after.spec)) return after;
  try {
    const desired = await deps.cloud.nodeClassStatus(after, deps.settings.cluster.kubernetesVersion);
    const rolledBack = before?.status?.rolledBackVersions;
    return {
      ...after,
      status: { ...before?.status, ...desired, ...(rolledBack ? { rolledBackVersions: rolledBack } : {}) },
    };
  } catch (error) {
    notComputed.push(
      `image and Kubernetes version drift under the changed AKSNodeClass ${after.metadata.name}: its images could not be resolved (${error instanceof Error ? error.message : String(error)}); they are judged against its live status`,
    );
    return after;
  }
}

const finite = (price: number): Price => (Number.isFinite(price) ? price : null);
const sumPrices = (prices: readonly number[]): Price => finite(prices.reduce((sum, p) => sum + p, 0));
const podKey = (pod: { namespace: string; name: string }) => `${pod.namespace}/${pod.name}`;

async function podLaunches(
  deps: LifecycleDependencies,
  state: ProvisioningState,
  pods: readonly V1Pod[],
  catalog: Catalog,
): Promise<WhatIfPods> {
  const selector = deps.settings.provisioning.selector;
  const buffers = await windowBuffers(deps);
  const inputFor = (pending: V1Pod[]): SchedulingInput => {
    const input = solveInput(
      { ...state, pendingPods: pending },
      {
        ...(selector && { selector }),
        policies: deps.settings.scheduling,
        ...(catalog.overlaid && { overlaid: catalog.overlaid }),
        instanceTypesFor: catalog.forClass,
      },
    );
    return { ...input, pods: withVirtualPods(input.pods, buffers) };
  };
  const run = (input: SchedulingInput): SchedulingResult =>
    input.pods.length === 0 ? { newNodeClaims: [], existingPlacements: [], unschedulable: [] } : solve(input);
  const before = run(inputFor(state.pendingPods));
  const input = inputFor([...state.pendingPods, ...pods]);
  const solved = run(input);
  const result = realPodsOnly(solved, buffers);
  const whatIfKeys = new Set(
    pods.map((p) => `${p.metadata?.namespace ?? 'default'}/${p.metadata?.name ?? ''}`),
  );
  const typesByPool = new Map(
    input.nodePools.map((p) => [p.name, new Map(p.instanceTypes.map((t) => [t.name, t]))]),
  );

  const launches: WhatIfLaunch[] = result.newNodeClaims.map((claim, index) => {
    const names = claim.pods.map(podKey);
    const offering = launchOffering(
      claim.instanceTypeNames.flatMap((n) => typesByPool.get(claim.nodePoolName)?.get(n) ?? []),
      claim.requirements,
    );
    return {
      nodePool: claim.nodePoolName,
      instanceTypes: claim.instanceTypeNames.slice(0, 10),
      instanceTypeCount: claim.instanceTypeNames.length,
      ...(offering.cheapest ? { cheapest: offering.cheapest } : {}),
      zones: offering.zones,
      pricePerHour: finite(solved.newNodeClaims[index]?.cheapestPrice ?? claim.cheapestPrice),
      pods: names,
      whatIfPods: names.filter((n) => whatIfKeys.has(n)),
    };
  });
  const placements: WhatIfPodPlacement[] = [];
  for (const pod of pods) {
    const key = `${pod.metadata?.namespace ?? 'default'}/${pod.metadata?.name ?? ''}`;
    const launch = launches.findIndex((l) => l.whatIfPods.includes(key));
    const existing = result.existingPlacements.find((p) => podKey(p.pod) === key);
    const unschedulable = result.unschedulable.find((u) => podKey(u.pod) === key);
    if (launch >= 0) placements.push({ pod: key, on: 'new', launch });
    else if (existing) placements.push({ pod: key, on: existing.kind, name: existing.nodeName });
    else
      placements.push({
        pod: key,
        on: 'nowhere',
        reason: unschedulable?.reason ?? 'not simulated (filtered out by the provisioning selector)',
      });
  }
  return {
    launches,
    placements,
    pricePerHour: {
      before: sumPrices(before.newNodeClaims.map((c) => c.cheapestPrice)),
      after: sumPrices(solved.newNodeClaims.map((c) => c.cheapestPrice)),
    },
  };
}

/** The cheapest available offering the requirements allow among `types`, and every zone they offer. */
function launchOffering(
  types: readonly InstanceType[],
  requirements: NodePool['spec']['template']['spec']['requirements'],
): {
  cheapest?: { instanceType: string; zone: string; capacityType: string; price: number };
  zones: string[];
  problem?: string;
} {
  const parsed = requirementMapOf(requirements);
  if ('error' in parsed) return { zones: [], problem: parsed.error };
  const zones = new Set<string>();
  let cheapest: { instanceType: string; zone: string; capacityType: string; price: number } | undefined;
  for (const type of types) {
    const compiled = compileInstanceType(type);
    if ('error' in compiled) continue;
    if (instanceTypeMismatch(compiled.instanceType, parsed.requirements) !== undefined) continue;
    const offering = cheapestOffering(compiled.instanceType, parsed.requirements);
    if (!offering) continue;
    for (const o of type.offerings) if (o.available && o.zone !== '') zones.add(o.zone);
    if (!cheapest || offering.price < cheapest.price) {
      cheapest = {
        instanceType: type.name,
        zone: offering.zone,
        capacityType: offering.capacityType,
        price: offering.price,
      };
    }
  }
  return { ...(cheapest ? { cheapest } : {}), zones: [...zones].sort() };
}

interface DriftContext {
  nodePool: NodePool;
  notComputed: string[];
  state: ProvisioningState;
  view: SweepView;
  pods: ClusterPods;
  catalog: Catalog;
  at: Date;
}

function driftOf(deps: LifecycleDependencies, context: DriftContext): WhatIfDrift {
  const { nodePool, state, view, pods, catalog, at } = context;
  const poolName = nodePool.metadata.name;
  const nodeClassName = nodePool.spec.template.spec.nodeClassRef.name;
  const nodeClass = state.nodeClasses.find((c) => c.metadata.name === nodeClassName);
  const claims = nodeClaimsByPool(state.nodeClaims).get(poolName) ?? [];
  const nodesFor = (c: NodeClaim) => view.nodesFor(c);
  const judged = claims.filter((c) => !c.metadata.deletionTimestamp && c.status?.providerID);
  const nodes: WhatIfDriftNode[] = [];
  for (const claim of judged) {
    const node: Node | undefined = nodesFor(claim)[0];
    // As the sweep's drift step: the provider is asked last, with the Node for its kubelet version.
    const provider = nodeClass ? deps.cloud.isDrifted(claim, nodeClass, node) : undefined;
    const result = evaluateDrift(claim, nodePool, nodeClass, provider);
    if (!result.drifted) continue;
    const labels = { ...node?.metadata.labels, ...claim.metadata.labels };
    const instanceType = labels[WellKnown.instanceTypeLabel];
    const capacityType = labels[WellKnown.capacityTypeLabel] === 'spot' ? 'spot' : 'on-demand';
    const blockedBy = node
      ? podsBlockDisruption(pods.byNode.get(node.metadata.name) ?? [], pods.pdbs, at)
      : undefined;
    nodes.push({
      nodeClaim: claim.metadata.name,
      ...(node ? { node: node.metadata.name } : {}),
      reason: result.reason,
      message: result.message,
      alreadyDrifted: isConditionTrue(claim.status?.conditions, ConditionTypes.drifted),
      disrupting: isDisrupting(claim, nodesFor(claim)),
      ...(blockedBy ? { blockedBy } : {}),
      ...(instanceType ? { instanceType } : {}),
      pricePerHour: instanceType ? (priceOf(catalog.prices, instanceType, capacityType) ?? null) : null,
    });
  }
  const budget = driftBudgetOf(nodePool, budgetNodesOf(claims, nodesFor), at);
  const policy = rolloutPolicyOf(nodePool, deps.settings.rollout.policy);
  const toReplace = nodes.filter((n) => !n.disrupting);
  const waves = driftWaves({
    drifted: toReplace.length,
    budget: budget.perWave,
    policy,
    canary: deps.settings.rollout.canary,
  });
  // A paused NodePool replaces nothing under the Canary policy (rollout.ts rolloutRoom).
  const paused = policy === 'Canary' && waves.kind === 'waves' && isRolloutPaused(nodePool);
  const plan: DriftWavePlan = paused
    ? { kind: 'never', reason: `NodePool ${poolName} is annotated ${RolloutAnnotations.paused}=true` }
    : waves;
  if (policy === 'Canary' && waves.kind === 'waves') {
    const underway = rolloutOf(nodePool, rolloutTargetOf(nodePool, nodeClass));
    if (underway) {
      context.notComputed.push(
        `NodePool ${poolName}: a rollout of this very target is already ${underway.phase} at wave ${underway.wave}; the waves counted are those of a fresh rollout, not what is left of it`,
      );
    }
  }
  const launch = nodeClass
    ? launchOffering(catalog.forPool(nodePool, nodeClass), nodePool.spec.template.spec.requirements)
    : undefined;
  const replacementProblem = !nodeClass
    ? `AKSNodeClass ${nodeClassName} does not exist: no replacement can launch`
    : !launch?.cheapest
      ? (launch?.problem ??
        `no instance type NodePool ${poolName}'s requirements allow has an available offering`)
      : undefined;
  const before = toReplace.map((n) => n.pricePerHour);
  const unitPrice = launch?.cheapest ? finite(launch.cheapest.price) : null;
  return {
    nodePool: poolName,
    ...(nodeClass ? { nodeClass: nodeClassName } : {}),
    policy,
    nodes,
    judged: judged.length,
    budget,
    plan,
    ...(launch?.cheapest
      ? {
          replacement: {
            instanceType: launch.cheapest.instanceType,
            zone: launch.cheapest.zone,
            capacityType: launch.cheapest.capacityType,
            pricePerHour: unitPrice,
          },
        }
      : {}),
    ...(replacementProblem ? { replacementProblem } : {}),
    pricePerHour: {
      before: before.some((p) => p === null) ? null : sumPrices(before as number[]),
      after: toReplace.length === 0 ? 0 : unitPrice === null ? null : finite(unitPrice * toReplace.length),
    },
  };
}

/** Longest an Underutilized search may run per NodePool for an answer. */
const WHAT_IF_SEARCH_MS = 10_000;

async function consolidationOf(
  deps: LifecycleDependencies,
  context: {
    view: SweepView;
    pods: ClusterPods;
    substitution: Substitution;
    at: Date;
  },
): Promise<WhatIfConsolidation[]> {
  const { view, pods, substitution, at } = context;
  // Underutilized reads the NodePool's AKSNodeClass itself: it must read the changed one.
  const classes = Object.assign(Object.create(deps.objects.nodeClasses) as KarpenterObjects['nodeClasses'], {
    get: async (name: string) => substitution.nodeClasses.get(name) ?? deps.objects.nodeClasses.get(name),
  });
  const substitutedDeps: LifecycleDependencies = {
    ...deps,
    objects: { ...deps.objects, nodeClasses: classes },
  };
  const byPool = nodeClaimsByPool(view.nodeClaims());
  const nodesFor = (c: NodeClaim) => view.nodesFor(c);
  const answers: WhatIfConsolidation[] = [];
  for (const nodePool of nodePoolsInScope({ view })) {
    if (!consolidates(nodePool)) continue;
    const name = nodePool.metadata.name;
    const claims = byPool.get(name) ?? [];
    if (claims.length === 0) continue;
    const budgetNodes = budgetNodesOf(claims, nodesFor);
    const verdicts = evaluateCandidates(nodeInputsOf(claims, nodesFor, pods), {
      nodePool,
      pdbs: pods.pdbs,
      nominatedNodes: pods.nominatedNodes,
      now: at,
    });
    const blocked = verdicts.flatMap((v) => (v.kind === 'blocked' ? [{ node: v.name, why: v.message }] : []));
    const emptyAllowed = allowedDisruptions(nodePool, 'Empty', budgetNodes, at).allowed;
    const empty = selectEmpty(verdicts, emptyAllowed);
    if (empty.length > 0) {
      answers.push({
        nodePool: name,
        method: 'emptiness',
        decision: 'delete',
        nodes: empty.map((c) => c.name),
        savingsPerHour: null,
      });
      continue;
    }
    const candidates = verdicts.filter((v): v is Candidate => v.kind === 'candidate');
    if (!consolidatesUnderutilized(nodePool) || candidates.length === 0) {
      const why = candidates.some((c) => c.empty)
        ? 'empty nodes wait: the Empty budget allows none now'
        : candidates.length === 0
          ? 'no node is a consolidation candidate now'
          : `consolidation policy ${nodePool.spec.disruption?.consolidationPolicy ?? 'WhenEmpty'} deletes only empty nodes`;
      answers.push({ nodePool: name, method: 'none', why, blocked });
      continue;
    }
    const allowed = allowedDisruptions(nodePool, 'Underutilized', budgetNodes, at).allowed;
    if (allowed < 1) {
      answers.push({
        nodePool: name,
        method: 'none',
        why: 'the Underutilized budget allows none now',
        blocked,
      });
      continue;
    }
    const input = await underutilizedInput(substitutedDeps, candidates, {
      nodePool,
      nodes: nodesWithNodeClaims(view),
      pods,
      allowed,
      spotToSpot: deps.settings.disruption.spotToSpotConsolidation,
      deadline: Date.now() + WHAT_IF_SEARCH_MS,
    });
    const ordered = {
      ...input,
      candidates: orderCandidates(input.candidates),
      heldCommands: heldConsolidationCommands(nodePool, at),
    };
    const multi = multiNodeConsolidation(ordered, []);
    if (multi) {
      answers.push(consolidationCommand(name, 'multi-node-consolidation', multi));
      continue;
    }
    const single = singleNodeConsolidation(ordered, []);
    if (single.command) {
      answers.push(consolidationCommand(name, 'single-node-consolidation', single.command));
      continue;
    }
    const why = single.unconsolidatable.map((u) => `${u.name}: ${u.why}`).join('; ');
    answers.push({ nodePool: name, method: 'none', why: why || 'no candidate consolidates', blocked });
  }
  return answers;
}

function consolidationCommand(
  nodePool: string,
  method: 'multi-node-consolidation' | 'single-node-consolidation',
  command: UnderutilizedCommand,
): WhatIfConsolidation {
  return {
    nodePool,
    method,
    decision: command.decision,
    nodes: command.candidates.map((c) => c.name),
    ...(command.decision === 'replace'
      ? { replacementInstanceTypes: command.replacement.instanceTypeNames.slice(0, 10) }
      : {}),
    savingsPerHour: finite(command.savings),
  };
}

const money = (price: Price): string => (price === null ? 'unknown' : `$${price.toFixed(4)}/h`);

/** The answer as a person reads it. */
export function renderWhatIf(answer: WhatIfAnswer): string {
  const lines: string[] = [];
  lines.push(`What if (cluster read at ${answer.at}):`);
  for (const change of answer.changes) {
    const name = change.namespace ? `${change.namespace}/${change.name}` : change.name;
    lines.push(
      `  ${change.kind} ${name}${change.kind !== 'Pod' ? (change.created ? ' (new)' : ' (changed)') : ''}`,
    );
  }
  if (answer.pods) {
    const { launches, placements, pricePerHour } = answer.pods;
    lines.push(
      '',
      `Launches: ${launches.length} new NodeClaim(s), ${money(pricePerHour.before)} → ${money(pricePerHour.after)}`,
    );
    launches.forEach((l, i) => {
      const first = l.cheapest
        ? `${l.cheapest.instanceType} in ${l.cheapest.zone || '(no zone)'} ${l.cheapest.capacityType}`
        : 'no offering';
      lines.push(
        `  #${i} NodePool ${l.nodePool}: ${first}, ${money(l.pricePerHour)}; ${l.instanceTypeCount} instance type(s) [${l.instanceTypes.join(', ')}]; zones ${l.zones.join(', ') || '-'}; ${l.pods.length} pod(s)`,
      );
    });
    for (const p of placements) {
      if (p.on === 'new') lines.push(`  pod ${p.pod} → new NodeClaim #${p.launch}`);
      else if (p.on === 'nowhere') lines.push(`  pod ${p.pod} → unschedulable: ${p.reason}`);
      else lines.push(`  pod ${p.pod} → existing ${p.on} ${p.name}`);
    }
  }
  for (const drift of answer.drift) {
    lines.push(
      '',
      `Drift of NodePool ${drift.nodePool} (${drift.nodes.length} of ${drift.judged} node(s); policy ${drift.policy}):`,
    );
    for (const n of drift.nodes) {
      const flags = [
        n.alreadyDrifted ? 'already drifted' : '',
        n.disrupting ? 'disrupting now' : '',
        n.blockedBy ? `waits: ${n.blockedBy}` : '',
      ]
        .filter(Boolean)
        .join(', ');
      lines.push(
        `  ${n.nodeClaim}${n.node ? ` (${n.node})` : ''}: ${n.reason}: ${n.message}${flags ? ` [${flags}]` : ''}`,
      );
    }
    lines.push(
      `  Drifted budget: ${drift.budget.perWave} per wave (${drift.budget.now} now, of ${drift.budget.total} node(s))`,
    );
    for (const error of drift.budget.errors) lines.push(`  budget error: ${error}`);
    const plan = drift.plan;
    if (plan.kind === 'never') lines.push(`  waves: never (${plan.reason})`);
    else if (plan.kind === 'none') lines.push('  waves: none (nothing to replace)');
    else
      lines.push(
        `  waves: ${plan.waves.length} (${plan.waves.map((w) => (w.canary ? `canary ${w.size}` : String(w.size))).join(' + ')})`,
      );
    if (drift.replacement)
      lines.push(
        `  replacements: ${drift.replacement.instanceType} in ${drift.replacement.zone || '(no zone)'} ${drift.replacement.capacityType}, ${money(drift.replacement.pricePerHour)} each; ${money(drift.pricePerHour.before)} → ${money(drift.pricePerHour.after)}`,
      );
    if (drift.replacementProblem) lines.push(`  replacements: ${drift.replacementProblem}`);
  }
  if (answer.consolidation.length > 0) lines.push('', 'Consolidation now:');
  for (const c of answer.consolidation) {
    if (c.method === 'none')
      lines.push(
        `  NodePool ${c.nodePool}: nothing (${c.why})${c.blocked.length > 0 ? `; ${c.blocked.length} node(s) blocked` : ''}`,
      );
    else
      lines.push(
        `  NodePool ${c.nodePool}: ${c.method} would ${c.decision} ${c.nodes.join(', ')}${c.replacementInstanceTypes ? ` with one of [${c.replacementInstanceTypes.join(', ')}]` : ''}${c.savingsPerHour !== null ? `, saving ${money(c.savingsPerHour)}` : ''}`,
      );
  }
  if (answer.notComputed.length > 0)
    lines.push('', 'Not computed:', ...answer.notComputed.map((n) => `  - ${n}`));
  if (answer.notes.length > 0) lines.push('', 'Notes:', ...answer.notes.map((n) => `  - ${n}`));
  return lines.join('\n');
}
