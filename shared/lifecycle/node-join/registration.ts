// Registration: the one code path behind both triggers (the bridge's Node events and the lifecycle
// sweep). It syncs the NodeClaim onto its Node and removes karpenter.sh/unregistered in a single
// resourceVersion-guarded write, then records Registered=True and status.nodeName on the NodeClaim.
// The Node write comes first: if the process dies between the two writes, the next pass finds the Node
// already synced (the plan is empty) and only writes the status.
import { LAUNCH_ATTEMPT_ANNOTATION } from '../../decisions/launch-annotations.js';
import { nodeClaimLifecycleLabels } from '../../decisions/cluster-gauges.js';
import { findCondition, isConditionTrue } from '../../decisions/conditions.js';
import { applyLifecycleConditions } from '../../decisions/lifecycle-conditions.js';
import {
  matchNodeForClaim,
  planNodeRegistration,
  registrationConditionFor,
  registrationPatch,
  RegistrationReasons,
} from '../../decisions/registration.js';
import { retryOnConflict } from '../../kube/retry-on-conflict.js';
import type { NodeClaim } from '../../models/index.js';
import { ConditionTypes, WellKnown } from '../../models/karpenter.js';
import type { Node } from '../../models/kube.js';
import { recordNodeClaimTransition } from '../../observability/nodeclaim-status-metrics.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { isManagedNodeClaim } from '../../decisions/ownership.js';
import {
  nodeClaimAfter,
  nodeClaimTarget,
  wasWritten,
  writeNodeClaim,
} from '../nodeclaims/nodeclaim-writes.js';
import { awaitsInitialization } from '../../decisions/initialization.js';
import { reconcileInitialization, type InitializationOutcome } from './initialization.js';
import { nodeClaimForProviderId } from '../nodeclaims/nodeclaim-nodes.js';

export type RegistrationOutcome =
  | { outcome: 'skipped'; why: string }
  | { outcome: 'node-not-found'; nodeClaim: NodeClaim }
  | { outcome: 'multiple-nodes'; nodeClaim: NodeClaim; nodeNames: string[] }
  | {
      outcome: 'registered';
      /** The NodeClaim and Node as stored after registration. */
      nodeClaim: NodeClaim;
      node: Node;
      nodeName: string;
      /** Whether this call wrote the Node (false when it was already synced). */
      nodeWritten: boolean;
      /** Whether this call moved the NodeClaim to Registered=True. */
      statusWritten: boolean;
      unregisteredTaintMissing: boolean;
    }
  | { outcome: 'nodeclaim-gone' };

/** Launched (has a providerID), managed by this system, alive, and not yet Registered=True. */
export function needsRegistration(nodeClaim: NodeClaim): boolean {
  return (
    isManagedNodeClaim(nodeClaim) &&
    !nodeClaim.metadata.deletionTimestamp &&
    Boolean(nodeClaim.status?.providerID) &&
    !isConditionTrue(nodeClaim.status?.conditions, ConditionTypes.registered)
  );
}

/**
 * Registers `nodeClaim` with its Node, chosen from `nodes` by providerID (passing only the candidates is
 * fine; passing every Node is too). Idempotent and safe to run concurrently with itself: the Node write
 * is guarded, a conflict re-reads the Node and re-plans, and the status write is guarded likewise.
 */
export async function reconcileRegistration(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  nodes: readonly Node[],
): Promise<RegistrationOutcome> {
  if (!needsRegistration(nodeClaim)) return { outcome: 'skipped', why: 'not awaiting registration' };
  const log = deps.log.with({ nodeClaim: nodeClaim.metadata.name, nodeClaimUid: nodeClaim.metadata.uid });
  const match = matchNodeForClaim(nodeClaim, nodes);

  if (match.outcome !== 'found') {
    const condition = registrationConditionFor(match);
    const stored = nodeClaimAfter(
      await writeNodeClaim(deps.objects, nodeClaim, (current) => ({
        status: {
          ...current.status,
          conditions: applyLifecycleConditions(current.status?.conditions, [condition], deps.now()),
        },
      })),
    );
    if (!stored) return { outcome: 'nodeclaim-gone' };
    if (match.outcome === 'multiple') {
      log.warn('several Nodes share the NodeClaim providerID', { nodes: match.nodeNames });
      return { outcome: 'multiple-nodes', nodeClaim: stored, nodeNames: match.nodeNames };
    }
    return { outcome: 'node-not-found', nodeClaim: stored };
  }

  const synced = await syncNode(deps, nodeClaim, match.node);
  // The Node vanished or changed its providerID while we wrote: the next pass sees the new state.
  if (synced === undefined) return { outcome: 'node-not-found', nodeClaim };
  const { node, nodeWritten, unregisteredTaintMissing } = synced;
  if (unregisteredTaintMissing) {
    await deps.events.warning(
      nodeClaimTarget(nodeClaim),
      RegistrationReasons.unregisteredTaintMissing,
      `Node ${node.metadata.name} joined without the ${WellKnown.unregisteredTaintKey} taint; it was registered, but pods may have been scheduled on it before its labels and taints were synced`,
    );
  }

  const write = await writeNodeClaim(deps.objects, nodeClaim, (current) => ({
    status: {
      ...current.status,
      nodeName: node.metadata.name,
      conditions: applyLifecycleConditions(
        current.status?.conditions,
        [{ type: ConditionTypes.registered, status: 'True', reason: RegistrationReasons.registered }],
        deps.now(),
      ),
    },
  }));
  if (write.outcome === 'gone') return { outcome: 'nodeclaim-gone' };
  const stored = write.nodeClaim;
  // Counted only by the call that made the transition, so concurrent sweeps never count twice.
  const statusWritten =
    wasWritten(write) && !isConditionTrue(write.before.status?.conditions, ConditionTypes.registered);
  if (statusWritten) recordRegistered(deps, stored);
  await revokeBootstrapToken(deps, stored);
  log.info('NodeClaim registered', { node: node.metadata.name, nodeWritten, statusWritten });
  return {
    outcome: 'registered',
    nodeClaim: stored,
    node,
    nodeName: node.metadata.name,
    nodeWritten,
    statusWritten,
    unregisteredTaintMissing,
  };
}

/**
 * The guarded Node write. On 409 the Node is read again and the plan recomputed from what is stored now,
 * so a concurrent change (a kubelet status update, another sweep's identical write, someone's label) is
 * kept, never overwritten. Undefined when the Node disappeared or no longer belongs to the NodeClaim.
 */
async function syncNode(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  found: Node,
): Promise<{ node: Node; nodeWritten: boolean; unregisteredTaintMissing: boolean } | undefined> {
  return retryOnConflict(
    found,
    async (node) => {
      if (matchNodeForClaim(nodeClaim, [node]).outcome !== 'found') return undefined;
      const plan = planNodeRegistration(nodeClaim, node);
      if (!plan.changed) return { node, nodeWritten: false, unregisteredTaintMissing: false };
      const written = await deps.nodes.patch(node.metadata.name, registrationPatch(node, plan.node));
      return { node: written, nodeWritten: true, unregisteredTaintMissing: plan.unregisteredTaintMissing };
    },
    (stale) => deps.nodes.get(stale.metadata.name),
  );
}

/** The node has its own credentials now; its bootstrap token must not outlive the need. */
async function revokeBootstrapToken(deps: LifecycleDependencies, nodeClaim: NodeClaim): Promise<void> {
  try {
    const attempt = nodeClaim.metadata.annotations?.[LAUNCH_ATTEMPT_ANNOTATION];
    const deleted = await deps.bootstrapTokens.delete({
      uid: nodeClaim.metadata.uid ?? '',
      ...(attempt !== undefined && { attempt }),
    });
    if (!deleted)
      deps.log.warn(
        "the Secret under the registered node's bootstrap token name is not the app's; left alone",
        {
          nodeClaim: nodeClaim.metadata.name,
        },
      );
  } catch (error) {
    // It still expires, and goes with the NodeClaim; a later registration pass does not retry it.
    deps.log.warn('could not delete the bootstrap token of a registered node', {
      nodeClaim: nodeClaim.metadata.name,
      error: error instanceof Error ? error.message : String(error),
    });
  }
}

function recordRegistered(deps: LifecycleDependencies, nodeClaim: NodeClaim): void {
  deps.metrics.increment('karpenter_nodes_created_total', {
    nodepool: nodeClaimLifecycleLabels(nodeClaim).nodepool,
  });
  const registered = findCondition(nodeClaim.status?.conditions, ConditionTypes.registered);
  const at = Date.parse(registered?.lastTransitionTime ?? '');
  // Registered was Unknown from the NodeClaim's creation (the launch request) to now: the whole wait a
  // pending pod sees, so a slow image pull or bootstrap shows up here and not only in VM creation time.
  recordNodeClaimTransition(deps.metrics, nodeClaim, {
    type: ConditionTypes.registered,
    status: 'True',
    reason: registered?.reason ?? ConditionTypes.registered,
    previousStatus: 'Unknown',
    previousSince: undefined,
    at: Number.isFinite(at) ? new Date(at) : deps.now(),
  });
}

export type NodeEventOutcome =
  | { outcome: 'ignored'; why: string }
  | { outcome: 'no-nodeclaim'; providerID: string }
  | RegistrationOutcome
  | InitializationOutcome;

/**
 * A node event's outcome for a log line: names and flags. The outcomes carry whole NodeClaims and Nodes
 * (managedFields, every label and condition), kilobytes a line that say nothing the names do not.
 */
export function describeNodeEventOutcome(
  result: NodeEventOutcome,
): Record<string, string | boolean | string[]> {
  switch (result.outcome) {
    case 'registered':
      return {
        outcome: result.outcome,
        nodeClaim: result.nodeClaim.metadata.name,
        node: result.nodeName,
        nodeWritten: result.nodeWritten,
        statusWritten: result.statusWritten,
        unregisteredTaintMissing: result.unregisteredTaintMissing,
      };
    case 'node-not-found':
      return { outcome: result.outcome, nodeClaim: result.nodeClaim.metadata.name };
    case 'multiple-nodes':
      return {
        outcome: result.outcome,
        nodeClaim: result.nodeClaim.metadata.name,
        nodeNames: result.nodeNames,
      };
    case 'ignored':
    case 'skipped':
      return { outcome: result.outcome, why: result.why };
    case 'no-nodeclaim':
      return { outcome: result.outcome, providerID: result.providerID };
    case 'nodeclaim-gone':
      return { outcome: result.outcome };
    case 'waiting':
      return {
        outcome: result.outcome,
        nodeClaim: result.nodeClaim.metadata.name,
        reason: result.reason,
      };
    case 'initialized':
      return {
        outcome: result.outcome,
        nodeClaim: result.nodeClaim.metadata.name,
        statusWritten: result.statusWritten,
      };
  }
}

/**
 * The bridge's path into registration and initialization: a Node that still carries
 * karpenter.sh/unregistered is matched to its NodeClaim by providerID and registered by the same
 * reconcileRegistration the sweep uses; a registered Node not yet labelled initialized is initialized by
 * the sweep's reconcileInitialization, so a Node turning Ready initializes its NodeClaim at once. Only the
 * event's Node is passed as a candidate: listing every Node per event would make a scale-up of N nodes
 * cost N², so a second Node with the same providerID is reported (MultipleNodesFound) by the sweep when
 * it is the one that registers the NodeClaim.
 */
export async function registerNodeFromEvent(
  deps: LifecycleDependencies,
  node: Node,
): Promise<NodeEventOutcome> {
  const unregistered = (node.spec.taints ?? []).some((t) => t.key === WellKnown.unregisteredTaintKey);
  if (!unregistered && !awaitsInitialization(node))
    return { outcome: 'ignored', why: 'Node is registered and initialized' };
  const providerID = node.spec.providerID;
  if (!providerID) return { outcome: 'ignored', why: 'Node has no providerID yet' };
  const nodeClaim = await nodeClaimForProviderId(deps, providerID);
  if (!nodeClaim) return { outcome: 'no-nodeclaim', providerID };
  if (!unregistered) return reconcileInitialization(deps, nodeClaim, [node]);
  return reconcileRegistration(deps, nodeClaim, [node]);
}
