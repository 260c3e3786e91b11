// The drift replacement orchestration, one per old NodeClaim (instance `replace-<old uid>`): taint the old
// Node karpenter.sh/disrupted:NoSchedule, create a replacement NodeClaim from the NodePool's current
// template and launch it, wait on durable timers until it is Initialized, then delete the old NodeClaim
// (termination drains it). If the replacement fails (deleted, Launched=False, not Initialized in time) the
// old node is untainted and unmarked, the attempt recorded with a backoff, and the budget slot released.
//
// The replacement is launched by this orchestration's activity rather than left to the bridge's event for
// the new NodeClaim: the orchestration then does not depend on the bridge being up, and its timing (what
// the fan-out exists for) does not include a queue hop. The bridge's later event finds the NodeClaim
// launched and does nothing (launch is level-triggered and guarded).
import type * as df from 'durable-functions';
import { callActivityThroughOutages } from '../outage-retry.js';
import type { NodeSelectorRequirement } from '../../models/kube.js';
import { findCondition, removeCondition, setCondition } from '../../decisions/conditions.js';
import {
  DisruptionAnnotations,
  failedAttemptAnnotations,
  isMarkedForDisruption,
} from '../../decisions/disruption-state.js';
import { deterministicNodeClaimName, nodeClaimFromTemplate } from '../../decisions/nodeclaim-template.js';
import { isAlreadyExists } from '../../kube/errors.js';
import { retryOnConflict } from '../../kube/retry-on-conflict.js';
import { ConditionTypes, type DisruptionReason, type NodeClaim } from '../../models/karpenter.js';
import type { HandlerContext } from '../../runtime/definitions.js';
import { ReplacementNames } from '../../runtime/function-names.js';
import type { LifecycleDependencies } from '../dependencies.js';
import {
  LaunchInProgressError,
  reconcileLaunch,
  TransientLaunchError,
  type LaunchResult,
} from '../launch/launch.js';
import { nodeClaimTarget, updateNodeClaimStatus } from '../nodeclaim-writes.js';
import { deleteNodeClaim } from '../termination/termination.js';
import { nodesOfNodeClaim } from '../nodeclaim-nodes.js';
import { taintNodeDisrupted, untaintNodeDisrupted } from '../node-taints.js';

export const replacementInstanceId = (oldNodeClaimUid: string): string => `replace-${oldNodeClaimUid}`;

export interface ReplacementInput {
  old: { name: string; uid: string; nodePool: string };
  reason: DisruptionReason;
  /** Why the node is being replaced, for the DisruptionReason condition's message. */
  detail: string;
  replacementName: string;
  startedAt: string;
  pollSeconds: number;
  timeoutMinutes: number;
  backoffMinutes: number;
  /**
   * The replacement's requirements instead of the template's: a consolidation replacement is limited to
   * the instance types cheaper than what it replaces.
   */
  requirements?: NodeSelectorRequirement[];
}

export type ReplacementCheck =
  | { status: 'Initialized' }
  | { status: 'Pending' }
  /** Not launched yet (another launch was in flight, or ARM throttled ours): launch it again. */
  | { status: 'NotLaunched' }
  | { status: 'Failed'; why: string };

export type ReplacementOutput =
  | { outcome: 'Replaced'; replacement: string }
  | { outcome: 'Abandoned'; why: string }
  | { outcome: 'OldNodeClaimGone' };

export interface AbandonInput {
  replacement: ReplacementInput;
  why: string;
}

/** The name of the attempt-th replacement of a NodeClaim: a retry after a failure gets a fresh one. */
export function replacementNameFor(nodePool: string, oldUid: string, attempt: number): string {
  return deterministicNodeClaimName(nodePool, `replacement/${oldUid}/${attempt}`);
}

/**
 * Polls the replacement until it is Initialized (undefined) or has failed or timed out (why), launching
 * it again when it has no VM yet. Shared by drift replacement and consolidation's replace, whose
 * orchestrations yield exactly these tasks in this order (their durable histories depend on it).
 */
export function* awaitReplacementInitialized(
  context: df.OrchestrationContext,
  input: ReplacementInput,
  failedAlready: string,
): Generator<df.Task, string | undefined, unknown> {
  const deadline = Date.parse(input.startedAt) + input.timeoutMinutes * 60_000;
  let why = failedAlready;
  while (!why) {
    const now = context.df.currentUtcDateTime.getTime();
    if (now >= deadline) return `the replacement was not Initialized within ${input.timeoutMinutes} minutes`;
    yield context.df.createTimer(new Date(Math.min(deadline, now + input.pollSeconds * 1000)));
    let check = yield* callActivityThroughOutages<ReplacementCheck>(context, ReplacementNames.check, input);
    if (check.status === 'NotLaunched') {
      check = yield* callActivityThroughOutages<ReplacementCheck>(context, ReplacementNames.launch, input);
    }
    if (check.status === 'Initialized') return undefined;
    if (check.status === 'Failed') why = check.why;
  }
  return why;
}

export function* replacementOrchestrator(
  context: df.OrchestrationContext,
): Generator<df.Task, ReplacementOutput, unknown> {
  const input = context.df.getInput<ReplacementInput>();
  const begun = yield* callActivityThroughOutages<'ok' | 'gone'>(context, ReplacementNames.begin, input);
  if (begun === 'gone') return { outcome: 'OldNodeClaimGone' };

  const launched = yield* callActivityThroughOutages<ReplacementCheck>(
    context,
    ReplacementNames.launch,
    input,
  );
  const why = yield* awaitReplacementInitialized(
    context,
    input,
    launched.status === 'Failed' ? launched.why : '',
  );
  if (why === undefined) {
    yield* callActivityThroughOutages(context, ReplacementNames.complete, input);
    return { outcome: 'Replaced', replacement: input.replacementName };
  }
  const abandon: AbandonInput = { replacement: input, why };
  yield* callActivityThroughOutages(context, ReplacementNames.abandon, abandon);
  return { outcome: 'Abandoned', why };
}

async function currentOld(
  deps: LifecycleDependencies,
  input: ReplacementInput,
): Promise<NodeClaim | undefined> {
  const nodeClaim = await deps.objects.nodeClaims.get(input.old.name);
  return nodeClaim && nodeClaim.metadata.uid === input.old.uid ? nodeClaim : undefined;
}

/** Marks the old NodeClaim (if the sweep has not) and taints its Node; 'gone' if it no longer exists. */
export async function beginReplacement(
  deps: LifecycleDependencies,
  input: ReplacementInput,
): Promise<'ok' | 'gone'> {
  const old = await currentOld(deps, input);
  if (!old || old.metadata.deletionTimestamp) return 'gone';
  const marked = await markForDisruption(deps, old, input.reason, input.detail);
  if (!marked) return 'gone';
  for (const node of await nodesOfNodeClaim(deps, marked)) await taintNodeDisrupted(deps, node);
  deps.metrics.increment('karpenter_voluntary_disruption_decisions_total', {
    decision: 'replace',
    reason: metricReason(input.reason),
    consolidation_type: '',
  });
  deps.log.info('replacement started: old node tainted', {
    nodeClaim: input.old.name,
    replacement: input.replacementName,
    reason: input.reason,
  });
  return 'ok';
}

/** Sets DisruptionReason=True; the budget counts the NodeClaim as disrupting from this write on. */
export async function markForDisruption(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  reason: DisruptionReason,
  detail: string,
): Promise<NodeClaim | undefined> {
  return updateNodeClaimStatus(deps.objects, nodeClaim, (current) => ({
    ...current.status,
    conditions: setCondition(
      current.status?.conditions,
      { type: ConditionTypes.disruptionReason, status: 'True', reason, message: detail },
      deps.now(),
    ),
  }));
}

/** Creates the replacement NodeClaim from the NodePool's current template and launches it. */
export async function launchReplacement(
  deps: LifecycleDependencies,
  input: ReplacementInput,
  context: Pick<HandlerContext, 'orchestrations' | 'invocationId'>,
): Promise<ReplacementCheck> {
  const nodePool = await deps.objects.nodePools.get(input.old.nodePool);
  if (!nodePool) return { status: 'Failed', why: `NodePool ${input.old.nodePool} no longer exists` };
  const nodeClass = await deps.objects.nodeClasses.get(nodePool.spec.template.spec.nodeClassRef.name);
  let replacement = await deps.objects.nodeClaims.get(input.replacementName);
  if (!replacement) {
    try {
      const fromTemplate = nodeClaimFromTemplate({
        nodePool,
        nodeClass,
        name: input.replacementName,
        annotations: { [DisruptionAnnotations.replacementOf]: input.old.name },
      });
      replacement = await deps.objects.nodeClaims.create(
        input.requirements
          ? { ...fromTemplate, spec: { ...fromTemplate.spec, requirements: input.requirements } }
          : fromTemplate,
      );
      deps.metrics.increment('karpenter_nodeclaims_created_total', {
        nodepool: input.old.nodePool,
        reason: metricReason(input.reason),
      });
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
      replacement = await deps.objects.nodeClaims.get(input.replacementName);
    }
  }
  if (!replacement) return { status: 'Failed', why: `replacement ${input.replacementName} was deleted` };
  if (replacement.metadata.deletionTimestamp) {
    return { status: 'Failed', why: `replacement ${input.replacementName} is being deleted` };
  }
  let result: LaunchResult;
  try {
    result = await reconcileLaunch(deps, input.replacementName, context);
  } catch (error) {
    // The bridge's event may be launching the same NodeClaim right now, or ARM throttled the PUT: both
    // resolve themselves, and the next check launches again if the NodeClaim still has no providerID.
    if (error instanceof LaunchInProgressError || error instanceof TransientLaunchError) {
      deps.log.info('replacement launch deferred', {
        replacement: input.replacementName,
        why: error.message,
      });
      return { status: 'Pending' };
    }
    throw error;
  }
  if (result.action === 'failed') {
    return {
      status: 'Failed',
      why: `replacement ${input.replacementName} failed to launch: ${result.reason}`,
    };
  }
  return { status: 'Pending' };
}

export async function checkReplacement(
  deps: LifecycleDependencies,
  input: ReplacementInput,
): Promise<ReplacementCheck> {
  const replacement = await deps.objects.nodeClaims.get(input.replacementName);
  if (!replacement || replacement.metadata.deletionTimestamp) {
    return { status: 'Failed', why: `replacement ${input.replacementName} was deleted` };
  }
  const conditions = replacement.status?.conditions;
  const launched = findCondition(conditions, ConditionTypes.launched);
  if (!replacement.status?.providerID && launched === undefined) return { status: 'NotLaunched' };
  if (launched?.status === 'False' && replacement.status?.providerID) {
    return {
      status: 'Failed',
      why: `replacement ${input.replacementName} failed to launch: ${launched.reason}`,
    };
  }
  if (findCondition(conditions, ConditionTypes.initialized)?.status === 'True')
    return { status: 'Initialized' };
  return { status: 'Pending' };
}

/** The replacement is Initialized: delete the old NodeClaim; termination drains and removes it. */
export async function completeReplacement(
  deps: LifecycleDependencies,
  input: ReplacementInput,
  context: Pick<HandlerContext, 'orchestrations'>,
): Promise<void> {
  const old = await currentOld(deps, input);
  if (!old) return;
  if (!old.metadata.deletionTimestamp) {
    // Termination starts at once rather than on the bridge's event or the next sweep.
    await deleteNodeClaim(deps, old, context);
    await deps.events.normal(
      nodeClaimTarget(old),
      'DisruptionReplaced',
      `Replaced by NodeClaim ${input.replacementName} (${input.reason}); terminating`,
    );
  }
  deps.metrics.increment('karpenter_nodeclaims_disrupted_total', {
    nodepool: input.old.nodePool,
    reason: metricReason(input.reason),
    outcome: 'replaced',
  });
  deps.log.info('replacement initialized; old NodeClaim deleted', {
    nodeClaim: input.old.name,
    replacement: input.replacementName,
  });
}

/** Deletes a failed replacement NodeClaim, unless it initialized after all: then it is a working node. */
export async function deleteUninitializedReplacement(
  deps: LifecycleDependencies,
  replacementName: string,
): Promise<void> {
  const replacement = await deps.objects.nodeClaims.get(replacementName);
  if (
    replacement &&
    !replacement.metadata.deletionTimestamp &&
    findCondition(replacement.status?.conditions, ConditionTypes.initialized)?.status !== 'True'
  ) {
    await deps.objects.nodeClaims.delete(replacementName, { uid: replacement.metadata.uid });
  }
}

/**
 * Puts the old node back in service: deletes a replacement that never initialized, untaints the old Node,
 * clears DisruptionReason and records the attempt with a backoff. Also used by the sweep for an
 * orchestration that ended without getting here.
 */
export async function abandonReplacement(deps: LifecycleDependencies, abandon: AbandonInput): Promise<void> {
  const input = abandon.replacement;
  await deleteUninitializedReplacement(deps, input.replacementName);
  const old = await currentOld(deps, input);
  // Unmarked means this attempt was already released; deleting means the node is going anyway, and
  // untainting it would invite pods onto a node that is being drained.
  if (!old || old.metadata.deletionTimestamp || !isMarkedForDisruption(old)) return;
  for (const node of await nodesOfNodeClaim(deps, old)) await untaintNodeDisrupted(deps, node);
  await releaseOld(deps, old, input);
  await deps.events.warning(
    nodeClaimTarget(old),
    'DisruptionReplacementFailed',
    `Replacement ${input.replacementName} failed: ${abandon.why}; node untainted, retried after a backoff`,
  );
  deps.metrics.increment('karpenter_nodeclaims_disrupted_total', {
    nodepool: input.old.nodePool,
    reason: metricReason(input.reason),
    outcome: 'replacement-failed',
  });
  deps.log.warn('replacement abandoned; old node back in service', {
    nodeClaim: input.old.name,
    replacement: input.replacementName,
    why: abandon.why,
  });
}

/** Backoff annotations, then DisruptionReason removed: the slot is released only after the backoff is on. */
async function releaseOld(
  deps: LifecycleDependencies,
  old: NodeClaim,
  input: ReplacementInput,
): Promise<void> {
  await retryOnConflict(
    old,
    async (current) => {
      if (!isMarkedForDisruption(current)) return;
      const annotated: NodeClaim = await deps.objects.nodeClaims.mergePatch(current.metadata.name, {
        metadata: {
          resourceVersion: current.metadata.resourceVersion,
          annotations: failedAttemptAnnotations(current, deps.now(), input.backoffMinutes * 60_000),
        },
      });
      await updateNodeClaimStatus(deps.objects, annotated, (latest) => ({
        ...latest.status,
        conditions: removeCondition(latest.status?.conditions, ConditionTypes.disruptionReason),
      }));
    },
    () => currentOld(deps, input),
  );
}

/** Input for a replacement of `old` started now; the attempt number comes from its recorded failures. */
export function replacementInput(
  deps: LifecycleDependencies,
  old: NodeClaim,
  nodePool: string,
  reason: DisruptionReason,
  detail: string,
  attempt: number,
): ReplacementInput {
  const settings = deps.settings.disruption;
  const uid = old.metadata.uid ?? '';
  return {
    old: { name: old.metadata.name, uid, nodePool },
    reason,
    detail,
    replacementName: replacementNameFor(nodePool, uid, attempt),
    startedAt: deps.now().toISOString(),
    pollSeconds: settings.replacementPollSeconds,
    timeoutMinutes: settings.replacementTimeoutMinutes,
    backoffMinutes: settings.replacementBackoffMinutes,
  };
}

/** Karpenter's metric label for a disruption reason is the lower-case condition reason ("drifted"). */
function metricReason(reason: DisruptionReason): string {
  return reason.toLowerCase();
}
