// Per NodeClaim of a NodePool that consolidates (the others have no use for the time, and skipping them
// saves the writes): record the last pod event (decisions/consolidation/pod-events.ts explains how it is
// known, from the pod watch and from a digest of each node's pods) in status.lastPodEventTime, keep the
// Consolidatable condition true exactly while consolidateAfter has passed since then, as upstream.
// Writes happen only on change, in one call of the NodeClaim writer that stores the status first and the
// digest annotation last, so a crash between the two makes the next sweep record the event again
// (later), never lose it.
import { findCondition, removeCondition, setCondition } from '../../decisions/conditions.js';
import type { ConsolidationNodeInput } from '../../decisions/consolidation/candidates.js';
import { nextPodEvent, POD_SET_DIGEST_ANNOTATION } from '../../decisions/consolidation/pod-events.js';
import { CONSOLIDATABLE_CONDITION, isConsolidatable } from '../../decisions/consolidation/timing.js';
import { ConditionTypes, type NodeClaim, type NodePool } from '../../models/karpenter.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { writeNodeClaim } from '../nodeclaims/nodeclaim-writes.js';
import {
  forEachObject,
  type StepReport,
  type SweepContext,
  type SweepStep,
} from '../sweep-step/sweep-step.js';
import { nodeInputsOf, sweepClusterPods, type ClusterPods } from './cluster-pods.js';
import { consolidates } from './methods/consolidation-pass.js';
import { nodeClaimsByPool, nodePoolsInScope } from './scope.js';

/**
 * The in-scope NodePools that consolidate, each with its NodeClaims, and the sweep's pods (read only when
 * some NodePool consolidates); undefined when none does.
 */
async function consolidatingPools(
  context: SweepContext,
): Promise<{ pools: { nodePool: NodePool; claims: NodeClaim[] }[]; pods: ClusterPods } | undefined> {
  const pools = nodePoolsInScope(context).filter(consolidates);
  if (pools.length === 0) return undefined;
  const pods = await sweepClusterPods(context.deps, context.view);
  const byPool = nodeClaimsByPool(context.view.nodeClaims());
  return {
    pools: pools.map((nodePool) => ({ nodePool, claims: byPool.get(nodePool.metadata.name) ?? [] })),
    pods,
  };
}

export const podEventsStep: SweepStep = {
  name: 'pod-events',
  async run(context) {
    const report: StepReport = { step: 'pod-events', examined: 0, acted: 0, failed: 0 };
    const scope = await consolidatingPools(context);
    if (!scope) return report;
    const now = context.deps.now();
    const work = scope.pools.flatMap(({ nodePool, claims }) =>
      nodeInputsOf(
        claims.filter((c) => !c.metadata.deletionTimestamp),
        (c) => context.view.nodesFor(c),
        scope.pods,
      ).map((input) => ({
        nodePool,
        input,
        observedEventAt: input.node ? scope.pods.podEventTimes.get(input.node.metadata.name) : undefined,
      })),
    );
    const result = await forEachObject(
      context,
      'pod-events',
      work,
      ({ input }) => input.nodeClaim.metadata.name,
      async ({ nodePool, input, observedEventAt }) => {
        const written = await recordPodEvents(context.deps, nodePool, input, observedEventAt, now);
        if (written) context.view.updateNodeClaim(written);
        return written !== undefined;
      },
    );
    return { ...result, step: 'pod-events' };
  },
};

/** The NodeClaim as stored after the writes, or undefined when nothing needed writing. */
async function recordPodEvents(
  deps: LifecycleDependencies,
  nodePool: NodePool,
  input: ConsolidationNodeInput,
  observedEventAt: number | undefined,
  now: Date,
): Promise<NodeClaim | undefined> {
  const { nodeClaim, node } = input;
  const initialized =
    findCondition(nodeClaim.status?.conditions, ConditionTypes.initialized)?.status === 'True';
  const recorded = nodeClaim.metadata.annotations?.[POD_SET_DIGEST_ANNOTATION];
  const update =
    initialized && node
      ? nextPodEvent({
          recordedDigest: recorded,
          lastPodEventTime: nodeClaim.status?.lastPodEventTime,
          pods: input.pods,
          observedEventAt,
          now,
        })
      : undefined;
  const withEvent: NodeClaim =
    update?.lastPodEventTime !== undefined
      ? { ...nodeClaim, status: { ...nodeClaim.status, lastPodEventTime: update.lastPodEventTime } }
      : nodeClaim;
  const consolidatable = isConsolidatable(withEvent, nodePool, now);
  // The digest is written only when the pod set changed (an event the watch saw changes the time alone),
  // and only over the digest it was compared with: one another sweep wrote since is compared next time.
  const digest = update && update.digest !== recorded ? update.digest : undefined;
  const write = await writeNodeClaim(
    deps.objects,
    nodeClaim,
    (current) => ({
      status: {
        ...current.status,
        ...(update?.changed && update.lastPodEventTime !== undefined
          ? { lastPodEventTime: update.lastPodEventTime }
          : {}),
        conditions: consolidatable
          ? setCondition(
              current.status?.conditions,
              { type: CONSOLIDATABLE_CONDITION, status: 'True', reason: CONSOLIDATABLE_CONDITION },
              now,
            )
          : removeCondition(current.status?.conditions, CONSOLIDATABLE_CONDITION),
      },
      ...(digest !== undefined &&
        current.metadata.annotations?.[POD_SET_DIGEST_ANNOTATION] === recorded && {
          annotations: { ...current.metadata.annotations, [POD_SET_DIGEST_ANNOTATION]: digest },
        }),
    }),
    { last: 'metadata' },
  );
  return write.outcome === 'written' ? write.nodeClaim : undefined;
}
