// Termination of a deleted NodeClaim that carries karpenter.sh/termination: drain its Node (drain.ts:
// taint, evict honouring PodDisruptionBudgets, delete what is left after terminationGracePeriod), stop
// its launch monitor, delete its VM (forced) and wait until ARM no longer has it, delete its Node, then
// remove the finalizer.
// Every step is idempotent and a VM that is already gone counts as deleted, so the orchestration can be
// restarted at any point and still converge. A drain a PodDisruptionBudget holds up can poll for hours:
// the orchestration continues as new once an execution has yielded TERMINATION_TASKS_PER_EXECUTION
// tasks, carrying its phase, pass count, start time and last drain answer, so its history stays bounded
// (../durable/history-budget.ts). The grace period needs nothing carried: the drain counts it from the NodeClaim's
// deletionTimestamp on every pass.
import type * as df from 'durable-functions';
import { callThroughOutages, durableActivity } from '../durable/durable-activity.js';
import { guardedNodePatch } from '../../decisions/node-patch.js';
import { isNotFound } from '../../kube/errors.js';
import type { Node } from '../../models/kube.js';
import { nodesOfNodeClaim } from '../nodeclaims/nodeclaim-nodes.js';
import { writeNodeClaim } from '../nodeclaims/nodeclaim-writes.js';
import type { NodeClaim } from '../../models/index.js';
import { WellKnown } from '../../models/karpenter.js';
import { isOrchestrationActive, type HandlerContext } from '../../runtime/definitions.js';
import { TerminationNames } from '../../runtime/function-names.js';
import type { LifecycleDependencies } from '../dependencies.js';
import type { DrainInput, DrainProgress } from './drain.js';
import { launchMonitorInstanceIds } from '../durable/launch-monitor-ids.js';
import { isManagedNodeClaim } from '../../decisions/ownership.js';
import { countingTasks, timerUntil, type TaskCount } from '../durable/history-budget.js';
import { nodeClaimLifecycleLabels } from '../../decisions/cluster-gauges.js';

export interface TerminationInput {
  nodeClaim: { name: string; uid: string };
  vmName: string;
  pollIntervalSeconds: number;
  /** Pause between drain passes; absent in inputs written before drain existed (then 5 s). */
  drainPollSeconds?: number;
  /** Where the previous execution left off; absent in the first one. */
  continued?: TerminationProgress;
}

/** What one execution hands the next over continue-as-new, and what the custom status shows. */
export interface TerminationProgress {
  phase: 'Draining' | 'DeletingVm';
  /** Drain and VM-deletion passes of this termination so far, over every execution. */
  passes: number;
  /** How many times this termination has continued as new. */
  continuations: number;
  /** When the termination's first execution began (RFC 3339). */
  startedAt: string;
  /** The last drain pass's answer. */
  lastDrain?: DrainProgress;
}

/**
 * Tasks (activity calls and timers) one execution yields before it continues as new at the end of a pass.
 * A blocked drain's pass is two tasks (the drain, the wait), so this is 50 passes, about four minutes at
 * the default 5 s poll, and about 4 events a task (../durable/history-budget.ts) keep an execution near 400 events:
 * small enough that a replay stays cheap, large enough that a drain that finishes in minutes (the common
 * case) never continues at all. A pass that meets an outage adds at most the ~47 tasks its retries take
 * within OUTAGE_GIVE_UP_MS before the check runs.
 */
export const TERMINATION_TASKS_PER_EXECUTION = 100;

export type VmDeletionProgress = 'Deleting' | 'Gone';

/** The workflow's activities: one descriptor each gives their registration and the typed calls below. */
export const TerminationActivities = {
  drain: durableActivity<DrainInput, DrainProgress>(TerminationNames.drain),
  deleteVm: durableActivity<TerminationInput, VmDeletionProgress>(TerminationNames.deleteVm),
  finish: durableActivity<TerminationInput>(TerminationNames.finish),
};

export const terminationInstanceId = (nodeClaimUid: string): string => `terminate-${nodeClaimUid}`;

export function needsTermination(nodeClaim: NodeClaim): boolean {
  return (
    isManagedNodeClaim(nodeClaim) &&
    Boolean(nodeClaim.metadata.deletionTimestamp) &&
    (nodeClaim.metadata.finalizers ?? []).includes(WellKnown.terminationFinalizer)
  );
}

/** Starts the termination orchestration for a deleted NodeClaim unless one already exists. */
export async function reconcileTermination(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  context: Pick<HandlerContext, 'orchestrations'>,
): Promise<'started' | 'running' | 'not-needed'> {
  if (!needsTermination(nodeClaim) || !nodeClaim.metadata.uid) return 'not-needed';
  const instanceId = terminationInstanceId(nodeClaim.metadata.uid);
  const existing = await context.orchestrations.getStatus(instanceId);
  if (isOrchestrationActive(existing)) return 'running';
  if (existing?.runtimeStatus === 'Completed' && !(await stillNeedsTermination(deps, nodeClaim))) {
    return 'not-needed';
  }
  if (existing) await context.orchestrations.purge(instanceId);
  const input: TerminationInput = {
    nodeClaim: { name: nodeClaim.metadata.name, uid: nodeClaim.metadata.uid },
    vmName: deps.cloud.instanceNameFor(nodeClaim.metadata.name),
    pollIntervalSeconds: deps.settings.launch.pollIntervalSeconds,
    drainPollSeconds: deps.settings.disruption.drainPollSeconds,
  };
  try {
    // New terminations run the second version (termination-v2.ts); the status check above reads the
    // instance ID, so a first-version termination still running counts as running.
    await context.orchestrations.startNew(TerminationNames.orchestrationV2, { instanceId, input });
  } catch (error) {
    if (await context.orchestrations.getStatus(instanceId)) return 'running';
    throw error;
  }
  deps.log.info('termination started', {
    nodeClaim: nodeClaim.metadata.name,
    nodeClaimUid: nodeClaim.metadata.uid,
  });
  return 'started';
}

/**
 * A termination completes only after it removed the finalizer, and the API server deletes a NodeClaim the
 * moment its last finalizer goes. So a copy that shows a NodeClaim whose termination completed is stale
 * (the sweep's watch-fed cache a moment behind): before starting over, which would drain, delete and
 * finish it again at three Durable actions a time, read it afresh.
 */
async function stillNeedsTermination(deps: LifecycleDependencies, nodeClaim: NodeClaim): Promise<boolean> {
  const fresh = await deps.objects.nodeClaims.get(nodeClaim.metadata.name);
  return fresh !== undefined && fresh.metadata.uid === nodeClaim.metadata.uid && needsTermination(fresh);
}

export function* terminationOrchestrator(
  context: df.OrchestrationContext,
): Generator<df.Task, string, unknown> {
  const { continued, ...input } = context.df.getInput<TerminationInput>();
  const progress: TerminationProgress = continued ?? {
    phase: 'Draining',
    passes: 0,
    continuations: 0,
    startedAt: context.df.currentUtcDateTime.toISOString(),
  };
  const count: TaskCount = { tasks: 0 };
  /** After a pass's wait: true once this execution has used its budget, having continued as new. */
  const continuedAsNew = (): boolean => {
    if (count.tasks < TERMINATION_TASKS_PER_EXECUTION) return false;
    const next: TerminationInput = {
      ...input,
      continued: { ...progress, continuations: progress.continuations + 1 },
    };
    context.df.continueAsNew(next);
    return true;
  };
  context.df.setCustomStatus(progress);
  while (progress.phase === 'Draining') {
    const drain = yield* countingTasks(
      count,
      callThroughOutages(context, TerminationActivities.drain, input),
    );
    progress.passes += 1;
    progress.lastDrain = drain;
    if (drain.status === 'Drained') progress.phase = 'DeletingVm';
    context.df.setCustomStatus(progress);
    if (drain.status === 'Drained') break;
    const next = new Date(context.df.currentUtcDateTime.getTime() + (input.drainPollSeconds ?? 5) * 1000);
    yield* countingTasks(count, timerUntil(context, next));
    if (continuedAsNew()) return 'ContinuedAsNew';
  }
  for (;;) {
    const vm = yield* countingTasks(
      count,
      callThroughOutages(context, TerminationActivities.deleteVm, input),
    );
    progress.passes += 1;
    context.df.setCustomStatus(progress);
    if (vm === 'Gone') break;
    const next = new Date(context.df.currentUtcDateTime.getTime() + input.pollIntervalSeconds * 1000);
    yield* countingTasks(count, timerUntil(context, next));
    if (continuedAsNew()) return 'ContinuedAsNew';
  }
  yield* callThroughOutages(context, TerminationActivities.finish, input);
  return 'Terminated';
}

/** Stops the launch monitor and deletes the VM; 'Gone' once ARM no longer has it. */
export async function deleteNodeClaimVm(
  deps: Pick<LifecycleDependencies, 'cloud' | 'log'>,
  input: TerminationInput,
  context: Pick<HandlerContext, 'orchestrations'>,
): Promise<VmDeletionProgress> {
  for (const monitorId of launchMonitorInstanceIds(input.nodeClaim.uid)) {
    const monitor = await context.orchestrations.getStatus(monitorId);
    if (isOrchestrationActive(monitor))
      await context.orchestrations.terminate(monitorId, 'NodeClaim deleted');
  }
  const vm = await deps.cloud.get(input.vmName);
  if (!vm) return 'Gone';
  // A VM under this name that is not this NodeClaim's (launch refused to adopt it) is never deleted.
  const ownership = deps.cloud.instanceOwnership(vm, input.nodeClaim.name);
  if (!ownership.owned) {
    deps.log.warn('VM not deleted with its NodeClaim', { vmName: input.vmName, detail: ownership.conflict });
    return 'Gone';
  }
  if (vm.state !== 'Deleting') await deps.cloud.delete(vm);
  return 'Deleting';
}

/** Deletes the NodeClaim's Node (if it registered) and removes the finalizer so the NodeClaim goes. */
export async function finishNodeClaimTermination(
  deps: LifecycleDependencies,
  input: TerminationInput,
): Promise<void> {
  const nodeClaim = await deps.objects.nodeClaims.get(input.nodeClaim.name);
  if (!nodeClaim || nodeClaim.metadata.uid !== input.nodeClaim.uid) return;
  for (const node of await nodesOfNodeClaim(deps, nodeClaim)) {
    try {
      // Registration put our finalizer on the Node; the VM is gone, so nothing is left to wait for.
      const finalizers = node.metadata.finalizers ?? [];
      if (finalizers.includes(WellKnown.terminationFinalizer)) {
        const released: Node = {
          ...node,
          metadata: {
            ...node.metadata,
            finalizers: finalizers.filter((f) => f !== WellKnown.terminationFinalizer),
          },
        };
        await deps.nodes.patch(node.metadata.name, guardedNodePatch(node, released));
      }
      await deps.nodes.delete(node.metadata.name);
      deps.metrics.increment('karpenter_nodes_terminated_total', {
        nodepool: nodeClaimLifecycleLabels(nodeClaim).nodepool,
      });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
  if (!(nodeClaim.metadata.finalizers ?? []).includes(WellKnown.terminationFinalizer)) return;
  const released = await writeNodeClaim(deps.objects, nodeClaim, (current) => ({
    finalizers: (current.metadata.finalizers ?? []).filter((f) => f !== WellKnown.terminationFinalizer),
  }));
  if (released.outcome !== 'written') return;
  deps.metrics.increment('karpenter_nodeclaims_terminated_total', nodeClaimLifecycleLabels(nodeClaim));
  deps.log.info('NodeClaim terminated', {
    nodeClaim: input.nodeClaim.name,
    nodeClaimUid: input.nodeClaim.uid,
  });
}

/**
 * Deletes a NodeClaim (only the one with this uid) and starts its termination at once, instead of
 * waiting for the deletion to come back as a bridge event or a sweep. Returns false if it was gone.
 */
export async function deleteNodeClaim(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  context: Pick<HandlerContext, 'orchestrations'>,
): Promise<boolean> {
  const deleted = await deps.objects.nodeClaims.delete(nodeClaim.metadata.name, {
    ...(nodeClaim.metadata.uid ? { uid: nodeClaim.metadata.uid } : {}),
  });
  if (!deleted) return false;
  const deleting = await deps.objects.nodeClaims.get(nodeClaim.metadata.name);
  if (deleting && deleting.metadata.uid === nodeClaim.metadata.uid) {
    await reconcileTermination(deps, deleting, context);
  }
  return true;
}
