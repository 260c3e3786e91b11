// The rollout workflow's two activities, begin and poll: each reads the NodePool, its AKSNodeClass, its
// NodeClaims and Nodes fresh (and, while gates are judged, the pods on the replaced nodes, and the old
// nodes' pods only when a pod restart calls for the comparison), asks decisions/rollout.ts what comes
// next, and writes it: the rollout's state as the NodePool's annotation, in one merge patch guarded by
// the resourceVersion it decided from (a conflict is read and decided again), and for a rollback first
// the rejected image version on the class's status.rolledBackVersions (guarded too, and skipped when
// listed already). Events and metrics follow a write that went through, so a step decided again after a
// conflict says nothing twice. The workflow (rollout-workflow.ts) only paces them.
import type { V1Pod } from '@kubernetes/client-node';
import { allowedDisruptions } from '../../../decisions/budgets.js';
import { budgetNodesOf } from '../../../decisions/disruption-state.js';
import {
  failedRolloutGates,
  oldNodeClaims,
  oldPodsNeeded,
  replacedNodeClaims,
  type RolloutGateLimits,
  type RolloutPod,
} from '../../../decisions/rollout-gates.js';
import {
  beginRollout,
  driftCountsOf,
  isRolloutPaused,
  pollRollout,
  rolloutPolicyOf,
  rolloutStateOf,
  rolloutTargetOf,
  RolloutAnnotations,
  serializeRolloutState,
  withRolledBackVersion,
  type RolloutDecision,
  type RolloutState,
  type RolloutStepInput,
} from '../../../decisions/rollout.js';
import { retryOnConflict } from '../../../kube/retry-on-conflict.js';
import type { AKSNodeClass, RolledBackVersion } from '../../../models/aks-node-class.js';
import { WellKnown, type NodeClaim, type NodePool } from '../../../models/karpenter.js';
import type { Node } from '../../../models/kube.js';
import { SweepView } from '../../cluster/snapshot.js';
import type { LifecycleDependencies } from '../../dependencies.js';
import { nodePoolTarget } from '../blocked-events.js';
import type { RolloutInput, RolloutStepAnswer } from './rollout-workflow.js';

type RolloutDependencies = Pick<
  LifecycleDependencies,
  'objects' | 'nodes' | 'drainPods' | 'now' | 'settings' | 'events' | 'metrics' | 'log' | 'cloud'
>;

/** What one step reads fresh. */
interface PoolRead {
  nodePool: NodePool;
  nodeClass: AKSNodeClass | undefined;
  nodeClaims: NodeClaim[];
  nodesFor: (nodeClaim: NodeClaim) => readonly Node[];
  now: Date;
}

async function readPool(deps: RolloutDependencies, nodePool: NodePool): Promise<PoolRead> {
  const name = nodePool.metadata.name;
  const labelSelector = `${WellKnown.nodePoolLabel}=${name}`;
  const now = deps.now();
  const [nodeClass, nodeClaims, nodes] = await Promise.all([
    deps.objects.nodeClasses.get(nodePool.spec.template.spec.nodeClassRef.name),
    deps.objects.nodeClaims.list({ labelSelector }),
    deps.nodes.listLabelled(labelSelector),
  ]);
  const view = new SweepView({
    readAt: now,
    nodeClaims,
    nodes,
    nodePools: [nodePool],
    nodeClasses: nodeClass ? [nodeClass] : [],
  });
  return { nodePool, nodeClass, nodeClaims, nodesFor: (c) => view.nodesFor(c), now };
}

function stepInput(deps: RolloutDependencies, input: RolloutInput, read: PoolRead): RolloutStepInput {
  const { nodePool, nodeClass, nodeClaims, nodesFor, now } = read;
  return {
    requested: input.target,
    current: rolloutTargetOf(nodePool, nodeClass),
    state: rolloutStateOf(nodePool),
    policy: rolloutPolicyOf(nodePool, deps.settings.rollout.policy),
    paused: isRolloutPaused(nodePool),
    resume: nodePool.metadata.annotations?.[RolloutAnnotations.resume],
    counts: driftCountsOf(nodeClaims, nodesFor),
    allowed: allowedDisruptions(nodePool, 'Drifted', budgetNodesOf(nodeClaims, nodesFor), now).allowed,
    now,
  };
}

/**
 * Reads the NodePool, decides with `decide` and applies the decision, deciding again from a fresh read
 * when the NodePool changed meanwhile. 'gone' when the NodePool is gone, deleting or another one now.
 */
async function step(
  deps: RolloutDependencies,
  input: RolloutInput,
  decide: (read: PoolRead) => Promise<RolloutDecision>,
): Promise<RolloutStepAnswer> {
  const name = input.nodePool.name;
  const first = await currentPool(deps, input);
  if (!first) return { ended: 'gone' };
  const answer = await retryOnConflict(
    first,
    async (nodePool) => {
      const read = await readPool(deps, nodePool);
      const decision = await decide(read);
      await apply(deps, read, decision);
      if (decision.ended) return { ended: decision.ended };
      const judgedAt = read.now.toISOString();
      const soaking = (decision.write ?? rolloutStateOf(read.nodePool))?.soakingSince !== undefined;
      return decision.write || decision.rejectImageVersion || soaking
        ? { judgedAt }
        : { judgedAt, quiet: true as const };
    },
    () => currentPool(deps, input),
  );
  if (answer === undefined) {
    deps.log.info('rollout ended: its NodePool is gone', { nodePool: name, target: input.target });
    return { ended: 'gone' };
  }
  return answer;
}

async function currentPool(deps: RolloutDependencies, input: RolloutInput): Promise<NodePool | undefined> {
  const nodePool = await deps.objects.nodePools.get(input.nodePool.name);
  if (!nodePool || nodePool.metadata.deletionTimestamp) return undefined;
  return nodePool.metadata.uid === input.nodePool.uid ? nodePool : undefined;
}

/** The rollout's first step: start the rollout (its canary), carry on with it, resume it, or end. */
export function beginNodePoolRollout(
  deps: RolloutDependencies,
  input: RolloutInput,
): Promise<RolloutStepAnswer> {
  return step(deps, input, (read) =>
    Promise.resolve(beginRollout({ ...stepInput(deps, input, read), canary: deps.settings.rollout.canary })),
  );
}

/** One poll: the gates, the wave's end and soak, the next wave, a rollback's end. */
export function pollNodePoolRollout(
  deps: RolloutDependencies,
  input: RolloutInput,
): Promise<RolloutStepAnswer> {
  return step(deps, input, async (read) => {
    const base = stepInput(deps, input, read);
    const { state } = base;
    const judging =
      state !== undefined &&
      state.target === input.target &&
      (state.phase === 'canary' || state.phase === 'waves') &&
      !base.paused &&
      base.policy === 'Canary';
    const gates = judging ? await judgeGates(deps, read, state) : [];
    return pollRollout({
      ...base,
      gates,
      imageRollback: gates.length > 0 ? deps.cloud.rollbackOf(read.nodeClaims, read.nodeClass) : undefined,
      runningRejected: state?.rejectedImageVersion
        ? deps.cloud.nodeClaimsOnImageVersion(read.nodeClaims, state.rejectedImageVersion)
        : 0,
      soakSeconds: deps.settings.rollout.soakSeconds,
      pollSeconds: input.pollSeconds,
      unwatchedSeconds: unwatchedSeconds(input, read.now),
    });
  });
}

/** The time since the previous poll was answered beyond one poll interval: how long no gate was judged. */
function unwatchedSeconds(input: RolloutInput, now: Date): number {
  const answeredAt = input.answeredAt ? Date.parse(input.answeredAt) : NaN;
  if (!Number.isFinite(answeredAt)) return 0;
  return Math.max(0, (now.getTime() - answeredAt) / 1000 - (input.waitedSeconds ?? input.pollSeconds));
}

async function judgeGates(deps: RolloutDependencies, read: PoolRead, state: RolloutState) {
  const { nodeClaims, nodesFor, now } = read;
  const gatesFrom = new Date(state.gatesFrom);
  const settings = deps.settings.rollout;
  const pods = new Map<string, RolloutPod[]>();
  const readPodsOf = async (claims: readonly NodeClaim[]) => {
    for (const node of claims.flatMap((c) => nodesFor(c))) {
      const name = node.metadata.name;
      if (pods.has(name)) continue;
      pods.set(
        name,
        (await deps.drainPods.onNode(name)).pods.map((p) => toRolloutPod(p, name)),
      );
    }
  };
  await readPodsOf(replacedNodeClaims(nodeClaims, gatesFrom));
  if (oldPodsNeeded([...pods.values()].flat(), settings.maxPodRestarts)) {
    await readPodsOf(oldNodeClaims(nodeClaims));
  }
  const limits: RolloutGateLimits = {
    initializedWithinSeconds: settings.initializedWithinSeconds,
    podReadyWithinSeconds: settings.podReadyWithinSeconds,
    maxPodRestarts: settings.maxPodRestarts,
    replacementBackoffBaseMs: deps.settings.disruption.replacementBackoffMinutes * 60_000,
    repairPolicies: deps.settings.repair.policies,
  };
  return failedRolloutGates({
    nodeClaims,
    nodesFor,
    podsOn: (name) => pods.get(name) ?? [],
    gatesFrom,
    now,
    limits,
  });
}

const iso = (value: Date | string | undefined): string | undefined =>
  value === undefined ? undefined : new Date(value).toISOString();

export function toRolloutPod(pod: V1Pod, nodeName: string): RolloutPod {
  const conditions = pod.status?.conditions ?? [];
  const scheduled = conditions.find((c) => c.type === 'PodScheduled' && c.status === 'True');
  const ready = conditions.find((c) => c.type === 'Ready');
  const scheduledAt = iso(scheduled?.lastTransitionTime);
  const readyChangedAt = iso(ready?.lastTransitionTime);
  return {
    namespace: pod.metadata?.namespace ?? 'default',
    name: pod.metadata?.name ?? '',
    nodeName,
    ...(pod.status?.phase ? { phase: pod.status.phase } : {}),
    terminating: pod.metadata?.deletionTimestamp !== undefined,
    ...(scheduledAt ? { scheduledAt } : {}),
    ready: ready?.status === 'True',
    ...(readyChangedAt ? { readyChangedAt } : {}),
    restarts: (pod.status?.containerStatuses ?? []).reduce((sum, c) => sum + (c.restartCount ?? 0), 0),
  };
}

/**
 * Writes what `decision` says, then tells it (events, metrics, log); a conflict on the NodePool is thrown
 * to be decided again. The state goes first and the rejected image version after it: a rollback's polls
 * ask for the version again until its nodes are gone, so a step that stops between the two writes loses
 * nothing, while the other order would let the class's image move before the NodePool says why.
 */
async function apply(deps: RolloutDependencies, read: PoolRead, decision: RolloutDecision): Promise<void> {
  const { nodePool } = read;
  const name = nodePool.metadata.name;
  if (decision.write) await writeState(deps, nodePool, decision, decision.write);
  if (decision.rejectImageVersion && read.nodeClass) {
    await rejectImageVersion(deps, read.nodeClass, {
      imageVersion: decision.rejectImageVersion.imageVersion,
      reason: decision.rejectImageVersion.reason,
      nodePool: name,
      timestamp: read.now.toISOString(),
    });
  }
}

async function writeState(
  deps: RolloutDependencies,
  nodePool: NodePool,
  decision: RolloutDecision,
  state: RolloutState,
): Promise<void> {
  const name = nodePool.metadata.name;
  await deps.objects.nodePools.mergePatch(name, {
    metadata: {
      resourceVersion: nodePool.metadata.resourceVersion,
      annotations: {
        [RolloutAnnotations.state]: serializeRolloutState(state),
        ...(decision.consumeResume ? { [RolloutAnnotations.resume]: null } : {}),
      },
    },
  });
  for (const event of decision.events) {
    const target = nodePoolTarget(nodePool);
    if (event.type === 'Warning') await deps.events.warning(target, event.reason, event.message);
    else await deps.events.normal(target, event.reason, event.message);
  }
  if (decision.waveStarted)
    deps.metrics.increment('karpenter_nodepools_rollout_waves_total', { nodepool: name });
  if (decision.soakRestarted) {
    deps.log.info('rollout soak restarted: its gates went unjudged for longer than a few polls', {
      nodePool: name,
      target: state.target,
      wave: state.wave,
    });
  }
  for (const gate of decision.failedGates ?? []) {
    deps.metrics.increment('karpenter_nodepools_rollout_gate_failures_total', {
      nodepool: name,
      gate: gateMetricLabel(gate),
    });
  }
  if (decision.finished) {
    deps.metrics.increment('karpenter_nodepools_rollouts_total', {
      nodepool: name,
      outcome: decision.finished,
    });
  }
  deps.log.info('rollout state written', {
    nodePool: name,
    target: state.target,
    phase: state.phase,
    wave: state.wave,
    floor: state.floor,
    ...(state.gate ? { gate: state.gate.name, why: state.gate.message } : {}),
    ...(state.rejectedImageVersion ? { rejectedImageVersion: state.rejectedImageVersion } : {}),
  });
}

/** "PodNotReady" → "pod_not_ready", upstream's snake case for label values. */
export function gateMetricLabel(gate: string): string {
  return gate.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** Appends the rejected version to the class's status.rolledBackVersions (guarded; nothing if listed). */
async function rejectImageVersion(
  deps: RolloutDependencies,
  nodeClass: AKSNodeClass,
  version: RolledBackVersion,
): Promise<void> {
  const name = nodeClass.metadata.name;
  await retryOnConflict(
    nodeClass,
    async (current) => {
      const rolledBackVersions = withRolledBackVersion(current.status?.rolledBackVersions, version);
      if (!rolledBackVersions) return;
      await deps.objects.nodeClasses.mergePatchStatus(name, {
        metadata: { resourceVersion: current.metadata.resourceVersion },
        status: { rolledBackVersions },
      });
      deps.log.warn('node image version rolled back', { nodeClass: name, ...version });
    },
    () => deps.objects.nodeClasses.get(name),
  );
}
