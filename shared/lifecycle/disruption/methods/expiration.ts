// Expiration, as upstream Karpenter: a NodeClaim whose expireAfter has passed since its creation is
// disrupted forcefully: no budget applies and no replacement is launched first. The executor marks,
// taints and deletes it; termination drains the node (bounded by its terminationGracePeriod) and the
// evicted pods, pending again, are provisioned for.
import { isExpired } from '../../../decisions/consolidation/timing.js';
import { isManagedNodeClaim } from '../../../decisions/ownership.js';
import { isMarkedForDisruption } from '../../../decisions/disruption-state.js';
import { candidateOf, commandFor } from './command.js';
import type { DisruptionMethod } from './method.js';

export const expirationMethod: DisruptionMethod = {
  name: 'expiration',
  reason: 'Expired',
  class: 'forceful',
  consolidationType: '',
  workflow: { per: 'candidate', instancePrefix: 'expire' },
  appliesTo: () => true,
  computeCommands(pass) {
    const expired = pass.nodeClaims.filter(
      (c) =>
        isManagedNodeClaim(c) &&
        !c.metadata.deletionTimestamp &&
        // Forceful, but a node another method is already replacing is left to it.
        !isMarkedForDisruption(c) &&
        isExpired(c, pass.now),
    );
    return Promise.resolve(
      expired.map((nodeClaim) =>
        commandFor(expirationMethod, pass, {
          candidates: [candidateOf(nodeClaim)],
          detail: `expireAfter ${nodeClaim.spec.expireAfter ?? ''} has passed since the NodeClaim was created`,
        }),
      ),
    );
  },
};
