// Creates a NodeClaim of one AKSNodeClass in a launch stack's run and announces it on the queue, as the
// event bridge would.
import { randomUUID } from 'node:crypto';
import type { NodeClaim } from '../../shared/models/index.js';
import { exampleRequirements, nodeClassRef } from './fixtures.js';
import type { LaunchStack } from './launch-stack.js';

export async function launchNodeClaim(
  stack: LaunchStack,
  nodeClassName: string,
  name = `${nodeClassName}-${randomUUID().slice(0, 4)}`,
): Promise<NodeClaim> {
  const nodeClaim = await stack.deps.objects.nodeClaims.create({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name,
      labels: { [stack.runLabel.key]: stack.runLabel.value },
    },
    spec: { nodeClassRef: nodeClassRef(nodeClassName), requirements: exampleRequirements },
  });
  await announceNodeClaim(stack, nodeClaim, 'ADDED');
  return nodeClaim;
}

/** What the event bridge would publish for a change of the NodeClaim. */
export async function announceNodeClaim(
  stack: LaunchStack,
  nodeClaim: NodeClaim,
  changeType: 'ADDED' | 'MODIFIED' = 'MODIFIED',
): Promise<void> {
  await stack.publish({
    kind: 'NodeClaim',
    name: nodeClaim.metadata.name,
    uid: nodeClaim.metadata.uid ?? '',
    resourceVersion: nodeClaim.metadata.resourceVersion ?? '1',
    changeType,
  });
}
