// A command's candidates as stored now, and one put back in service (untainted, unmarked, a failed attempt
// recorded when it failed): what the executor does when a command ends without deleting them, and what
// the disruption step does for a mark whose workflow ended or never started. Apart from the executor, so
// the step releases a mark the same way without reaching into the workflow's code.
import { removeCondition } from '../../decisions/conditions.js';
import { disruptionReasonOf, failedAttemptAnnotations } from '../../decisions/disruption-state.js';
import { ConditionTypes, type NodeClaim } from '../../models/karpenter.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { nodesOfNodeClaim } from '../nodeclaims/nodeclaim-nodes.js';
import { writeNodeClaim } from '../nodeclaims/nodeclaim-writes.js';
import { untaintNodeDisrupted } from '../nodeclaims/node-taints.js';
import type { CommandCandidate } from './methods/method.js';

/** The NodeClaim the command means, as stored now: undefined when gone or recreated under its name. */
export async function currentCandidate(
  deps: LifecycleDependencies,
  candidate: CommandCandidate,
): Promise<NodeClaim | undefined> {
  const nodeClaim = await deps.objects.nodeClaims.get(candidate.name);
  return nodeClaim && nodeClaim.metadata.uid === candidate.uid ? nodeClaim : undefined;
}

/**
 * Puts a NodeClaim marked for `reason` back in service: untaints its Nodes and removes the mark, after
 * recording a failed attempt with its backoff when `failed` (so the slot is released only once the
 * backoff holds the node). False when there was nothing to release: gone, deleting (untainting a node
 * being drained would invite pods back), or not marked for `reason`.
 */
export async function releaseCandidate(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  reason: string,
  options: { failed?: boolean } = {},
): Promise<NodeClaim | undefined> {
  const stillMarked = (c: NodeClaim | undefined): c is NodeClaim =>
    c !== undefined && !c.metadata.deletionTimestamp && disruptionReasonOf(c) === reason;
  if (!stillMarked(nodeClaim)) return undefined;
  for (const node of await nodesOfNodeClaim(deps, nodeClaim)) await untaintNodeDisrupted(deps, node);
  // One change: the failed attempt (metadata) is stored before the mark goes (status), as the writer
  // orders them, so the slot is never released without the backoff that holds the node.
  const write = await writeNodeClaim(deps.objects, nodeClaim, (current) =>
    stillMarked(current)
      ? {
          ...(options.failed && {
            annotations: {
              ...current.metadata.annotations,
              ...failedAttemptAnnotations(
                current,
                deps.now(),
                deps.settings.disruption.replacementBackoffMinutes * 60_000,
              ),
            },
          }),
          status: {
            ...current.status,
            conditions: removeCondition(current.status?.conditions, ConditionTypes.disruptionReason),
          },
        }
      : {},
  );
  return write.outcome === 'written' ? write.nodeClaim : undefined;
}
