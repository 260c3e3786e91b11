// The sweep's steps. Each step gets the same read-once view of the cluster, decides per object with pure
// functions (no request for an object that needs nothing), and writes only what changed. Later phases
// (drift marking, budget-limited replacement, static NodePools, garbage collection) plug in as further
// steps of the same list, after these.
import { randomUUID } from 'node:crypto';
import { findCondition } from '../../decisions/conditions.js';
import type { NodeClaim } from '../../models/index.js';
import { ConditionTypes } from '../../models/karpenter.js';
import type { Logger } from '../../observability/logger.js';
import type { HandlerContext } from '../../runtime/definitions.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { needsInitialization, reconcileInitialization } from '../initialization.js';
import { isManagedNodeClaim } from '../../decisions/ownership.js';
import { LaunchInProgressError, reconcileLaunch } from '../launch/launch.js';
import { ensureLaunchMonitor, hasLaunchOutcome } from '../launch/launch-monitor-start.js';
import { reconcileLiveness } from '../liveness.js';
import { needsRegistration, reconcileRegistration } from '../registration.js';
import { needsTermination, reconcileTermination } from '../termination.js';
import {
  cleanUpLeftovers,
  MAX_CLEANUP_ATTEMPTS,
  noteSweepUids,
  type LeftoverMemory,
} from './launch-leftovers.js';
import type { SweepView } from './snapshot.js';
import { disruptionSteps } from './disruption-steps.js';
import { statusStep } from './status-step.js';

export interface SweepContext {
  deps: LifecycleDependencies;
  view: SweepView;
  orchestrations: HandlerContext['orchestrations'];
  log: Logger;
  /** State kept between sweeps of this process (see launch-leftovers.ts for why it is in memory). */
  memory: { leftovers: LeftoverMemory };
  /** True once the sweep lost its lease: steps stop taking new objects. */
  stopping(): boolean;
  /** The label selector the sweep's NodeClaims were read with, if any (NodePool-wide steps honour it). */
  nodeClaimSelector?: string;
}

export interface StepReport {
  step: string;
  /** Objects the step looked at. */
  examined: number;
  /** Objects the step wrote or acted on. */
  acted: number;
  failed: number;
}

export interface SweepStep {
  name: string;
  run(context: SweepContext): Promise<StepReport>;
}

/** Per-object work runs this many at a time: enough to hide API latency, few enough to stay polite. */
export const OBJECT_CONCURRENCY = 8;

/**
 * Runs `work` for each item, a few at a time. One object's failure is logged and counted, never allowed
 * to stop the others: the next sweep retries it.
 */
export async function forEachObject<T>(
  context: SweepContext,
  step: string,
  items: readonly T[],
  describe: (item: T) => string,
  work: (item: T) => Promise<boolean>,
): Promise<StepReport> {
  const report: StepReport = { step, examined: items.length, acted: 0, failed: 0 };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && !context.stopping()) {
      const item = items[next++] as T;
      try {
        if (await work(item)) report.acted += 1;
      } catch (error) {
        report.failed += 1;
        context.log.warn('sweep step failed for one object', { step, object: describe(item), error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(OBJECT_CONCURRENCY, items.length) }, worker));
  return report;
}

const nameOf = (nodeClaim: { metadata: { name: string } }): string => nodeClaim.metadata.name;

export const registrationStep: SweepStep = {
  name: 'registration',
  run: (context) =>
    forEachObject(
      context,
      'registration',
      context.view.nodeClaims().filter(needsRegistration),
      nameOf,
      async (nodeClaim) => {
        const result = await reconcileRegistration(context.deps, nodeClaim, context.view.nodesFor(nodeClaim));
        if (result.outcome === 'nodeclaim-gone') {
          context.view.removeNodeClaim(nodeClaim);
          return false;
        }
        if (result.outcome === 'skipped') return false;
        context.view.updateNodeClaim(result.nodeClaim);
        if (result.outcome !== 'registered') return result.nodeClaim !== nodeClaim;
        context.view.updateNode(result.node);
        return result.nodeWritten || result.statusWritten;
      },
    ),
};

export const initializationStep: SweepStep = {
  name: 'initialization',
  run: (context) =>
    forEachObject(
      context,
      'initialization',
      context.view.nodeClaims().filter(needsInitialization),
      nameOf,
      async (nodeClaim) => {
        const result = await reconcileInitialization(
          context.deps,
          nodeClaim,
          context.view.nodesFor(nodeClaim),
        );
        if (result.outcome === 'nodeclaim-gone') {
          context.view.removeNodeClaim(nodeClaim);
          return false;
        }
        if (result.outcome === 'skipped') return false;
        context.view.updateNodeClaim(result.nodeClaim);
        return result.nodeClaim !== nodeClaim;
      },
    ),
};

export const livenessStep: SweepStep = {
  name: 'liveness',
  run: (context) =>
    forEachObject(context, 'liveness', context.view.nodeClaims(), nameOf, async (nodeClaim) => {
      const result = await reconcileLiveness(context.deps, nodeClaim, context);
      if (result.outcome === 'deleted' || result.outcome === 'gone') context.view.removeNodeClaim(nodeClaim);
      return result.outcome === 'deleted';
    }),
};

/** Deleted NodeClaims whose termination orchestration is missing (a lost bridge event) get one. */
export const terminationStep: SweepStep = {
  name: 'termination',
  run: (context) =>
    forEachObject(
      context,
      'termination',
      context.view.nodeClaims().filter(needsTermination),
      nameOf,
      async (nodeClaim) => {
        return (await reconcileTermination(context.deps, nodeClaim, context)) === 'started';
      },
    ),
};

export const launchLeftoversStep: SweepStep = {
  name: 'launch-leftovers',
  async run(context) {
    const seen = new Set(
      context.view.snapshot.nodeClaims
        .map((n) => n.metadata.uid)
        .filter((uid): uid is string => Boolean(uid)),
    );
    const memory = noteSweepUids(context.memory.leftovers, seen);
    context.memory.leftovers = memory;
    const report = await forEachObject(
      context,
      'launch-leftovers',
      [...memory.pending.keys()],
      String,
      async (uid) => {
        const attempts = (memory.pending.get(uid) ?? 0) + 1;
        const result = await cleanUpLeftovers(context.orchestrations, uid, context.log);
        if (result === 'clean' || attempts >= MAX_CLEANUP_ATTEMPTS) memory.pending.delete(uid);
        else memory.pending.set(uid, attempts);
        return true;
      },
    );
    return report;
  },
};

/**
 * Issue 4's steps in the order they must run: registration before initialization (a Node that joined
 * Ready can initialize in the same sweep) and both before liveness (a Node that registered just now
 * must not be timed out from the stale read).
 */
/**
 * The safety net for launch: a NodeClaim that still has no providerID some seconds after it was created
 * (its bridge event was lost, or its launch was blocked by a class that has since appeared) is launched
 * here. The grace period leaves the event path to go first; a race between the two is harmless, as the
 * launch claims the NodeClaim with a resourceVersion-guarded write before any PUT.
 */
export const launchStep: SweepStep = {
  name: 'launch',
  run: (context) => {
    const now = context.deps.now().getTime();
    return forEachObject(
      context,
      'launch',
      context.view.nodeClaims().filter((nodeClaim) => awaitsLaunch(nodeClaim, now)),
      nameOf,
      async (nodeClaim) => {
        try {
          const result = await reconcileLaunch(context.deps, nodeClaim.metadata.name, {
            orchestrations: context.orchestrations,
            invocationId: randomUUID(),
          });
          return result.action === 'launched' || result.action === 'failed';
        } catch (error) {
          // Another launch of the same NodeClaim is in flight: it will finish what this one started.
          if (error instanceof LaunchInProgressError) return false;
          throw error;
        }
      },
    );
  },
};

/**
 * Launched NodeClaims whose outcome is still unknown: each needs a live launch monitor, or a new one that
 * reads the outcome from ARM (see ensureLaunchMonitor). One status read per such NodeClaim per sweep.
 */
export const launchMonitorStep: SweepStep = {
  name: 'launch-monitor',
  run: (context) =>
    forEachObject(
      context,
      'launch-monitor',
      context.view.nodeClaims().filter(awaitsLaunchOutcome),
      nameOf,
      async (nodeClaim) => {
        const outcome = await ensureLaunchMonitor(context.deps, nodeClaim, {
          orchestrations: context.orchestrations,
        });
        return outcome === 'started' || outcome === 'terminated';
      },
    ),
};

function awaitsLaunchOutcome(nodeClaim: NodeClaim): boolean {
  return (
    isManagedNodeClaim(nodeClaim) &&
    !nodeClaim.metadata.deletionTimestamp &&
    Boolean(nodeClaim.status?.providerID) &&
    !hasLaunchOutcome(nodeClaim)
  );
}

export const LAUNCH_GRACE_MS = 10_000;
const retriedBlockReasons = new Set(['NodeClassNotFound', 'NodePoolNotFound', 'InvalidRequirements']);

function awaitsLaunch(nodeClaim: NodeClaim, now: number): boolean {
  if (
    !isManagedNodeClaim(nodeClaim) ||
    nodeClaim.metadata.deletionTimestamp ||
    nodeClaim.status?.providerID
  ) {
    return false;
  }
  const created = Date.parse(nodeClaim.metadata.creationTimestamp ?? '');
  if (!Number.isFinite(created) || now - created < LAUNCH_GRACE_MS) return false;
  const launched = findCondition(nodeClaim.status?.conditions, ConditionTypes.launched);
  return launched === undefined || (launched.status === 'False' && retriedBlockReasons.has(launched.reason));
}

export const lifecycleSteps: readonly SweepStep[] = [
  launchStep,
  launchMonitorStep,
  registrationStep,
  initializationStep,
  livenessStep,
  terminationStep,
  launchLeftoversStep,
  ...disruptionSteps,
  // Last: NodePool status counts the nodes the steps above launched, registered or deleted.
  { name: 'status', run: (context) => statusStep.run(context) },
];
