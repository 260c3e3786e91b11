// Drain, the first part of termination: taint the NodeClaim's Node karpenter.sh/disrupted:NoSchedule,
// evict its pods through the Eviction API, and once the NodeClaim's terminationGracePeriod has run out
// delete the pods still there. One call is one pass; the termination orchestration repeats it on a
// durable timer until 'Drained'. A refusal is about one pod (a PodDisruptionBudget's 429, a 403 because
// its namespace is terminating, a 500 from a webhook): that pod is tried again on the next pass and the
// pass goes on with the others, so one pod cannot hold up the eviction of the rest. Each pass says what it
// did with upstream's Events on the Pod, the Node and the NodeClaim (termination-events.ts).
import type { V1Pod } from '@kubernetes/client-node';
import { podDrainAction, type DrainPod } from '../../decisions/drain.js';
import { DurationParseError, parseFiniteDuration } from '../../decisions/duration.js';
import { isNotFound, kubeErrorMessage, statusCodeOf } from '../../kube/errors.js';
import { isTransientRequestError } from '../durable/outage-retry.js';
import type { NodeClaim } from '../../models/karpenter.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { nodesOfNodeClaim } from '../nodeclaims/nodeclaim-nodes.js';
import { taintNodeDisrupted } from '../nodeclaims/node-taints.js';
import {
  evictionReasonOf,
  publishGracePeriodExpiring,
  publishNodeFailedToDrain,
  publishPodDisrupted,
  publishPodEvicted,
  type EventPod,
} from './termination-events.js';

export type DrainProgress =
  | { status: 'Drained' }
  | {
      status: 'Draining';
      waiting: number;
      blockedByPdb: number;
      deleted: number;
      /** Pods whose eviction or deletion was refused for another reason this pass (tried again next pass). */
      refused?: number;
    };

export interface DrainInput {
  nodeClaim: { name: string; uid: string };
}

function toDrainPod(pod: V1Pod): DrainPod {
  const deletion = pod.metadata?.deletionTimestamp;
  return {
    namespace: pod.metadata?.namespace ?? 'default',
    name: pod.metadata?.name ?? '',
    ...(pod.status?.phase ? { phase: pod.status.phase } : {}),
    ownerKinds: (pod.metadata?.ownerReferences ?? []).map((o) => o.kind),
    annotations: pod.metadata?.annotations ?? {},
    tolerations: (pod.spec?.tolerations ?? []).map((t) => ({
      ...(t.key !== undefined ? { key: t.key } : {}),
      ...(t.operator !== undefined ? { operator: t.operator } : {}),
      ...(t.effect !== undefined ? { effect: t.effect } : {}),
    })),
    ...(deletion ? { deletionTimestamp: new Date(deletion).toISOString() } : {}),
    ...(pod.status?.startTime ? { startTime: new Date(pod.status.startTime).toISOString() } : {}),
  };
}

function toEventPod(pod: V1Pod): EventPod {
  const grace = pod.spec?.terminationGracePeriodSeconds;
  return {
    namespace: pod.metadata?.namespace ?? 'default',
    name: pod.metadata?.name ?? '',
    ...(pod.metadata?.uid ? { uid: pod.metadata.uid } : {}),
    ...(grace !== undefined ? { terminationGracePeriodSeconds: grace } : {}),
  };
}

/** When the NodeClaim's terminationGracePeriod ends, counted from its deletion; undefined = no deadline. */
export function graceDeadlineOf(nodeClaim: NodeClaim): Date | undefined {
  const period = nodeClaim.spec.terminationGracePeriod;
  const deletedAt = nodeClaim.metadata.deletionTimestamp;
  if (!period || !deletedAt) return undefined;
  try {
    return new Date(Date.parse(deletedAt) + parseFiniteDuration(period));
  } catch (error) {
    if (error instanceof DurationParseError) return undefined;
    throw error;
  }
}

export async function drainNodeClaim(deps: LifecycleDependencies, input: DrainInput): Promise<DrainProgress> {
  const nodeClaim = await deps.objects.nodeClaims.get(input.nodeClaim.name);
  if (!nodeClaim || nodeClaim.metadata.uid !== input.nodeClaim.uid) return { status: 'Drained' };
  const nodes = await nodesOfNodeClaim(deps, nodeClaim);
  if (nodes.length === 0) return { status: 'Drained' };
  const now = deps.now();
  const deadline = graceDeadlineOf(nodeClaim);
  let waiting = 0;
  let blockedByPdb = 0;
  let deleted = 0;
  const refusals: string[] = [];
  // Upstream's events: the grace period's end while it drains, each eviction and deletion on its pod, and
  // a Node whose pods are not all gone after the pass (termination-events.ts).
  if (deadline) await publishGracePeriodExpiring(deps, nodeClaim, nodes, deadline);
  for (const node of nodes) {
    await taintNodeDisrupted(deps, node);
    const onNode = await deps.drainPods.onNode(node.metadata.name);
    const waitingBefore = waiting;
    const blockedBefore = blockedByPdb;
    for (const source of onNode.pods) {
      const pod = toDrainPod(source);
      const action = podDrainAction(pod, now, deadline);
      if (action === 'leave') continue;
      waiting += 1;
      if (action === 'wait') continue;
      try {
        if (action === 'delete') {
          await onNode.delete(pod);
          deleted += 1;
          const eventPod = toEventPod(source);
          // The pod gets its own grace period: the deletion sends none.
          if (deadline)
            await publishPodDisrupted(deps, eventPod, deadline, eventPod.terminationGracePeriodSeconds ?? 30);
        } else {
          await onNode.evict(pod);
          await publishPodEvicted(deps, toEventPod(source), evictionReasonOf(nodeClaim));
        }
      } catch (error) {
        if (isNotFound(error)) continue;
        // 429: a PodDisruptionBudget allows no disruption now. Retried on the next pass.
        if (statusCodeOf(error) === 429) {
          blockedByPdb += 1;
          continue;
        }
        // Any other answer of the API server (403 NamespaceTerminating, 500, …) or no answer: this pod
        // waits for the next pass. What is not an answer at all (a bug) still fails the pass.
        if (statusCodeOf(error) === undefined && !isTransientRequestError(error)) throw error;
        refusals.push(
          `${pod.namespace}/${pod.name}: ${statusCodeOf(error) ?? ''} ${kubeErrorMessage(error)}`,
        );
      }
    }
    if (waiting > waitingBefore) {
      await publishNodeFailedToDrain(deps, node, {
        waiting: waiting - waitingBefore,
        blockedByPdb: blockedByPdb - blockedBefore,
      });
    }
  }
  if (waiting === 0) return { status: 'Drained' };
  deps.log.info('draining', {
    nodeClaim: input.nodeClaim.name,
    waiting,
    blockedByPdb,
    deleted,
    ...(refusals.length > 0 ? { refused: refusals.length, firstRefusals: refusals.slice(0, 5) } : {}),
  });
  return {
    status: 'Draining',
    waiting,
    blockedByPdb,
    deleted,
    ...(refusals.length > 0 ? { refused: refusals.length } : {}),
  };
}
