import { TerminationNames } from '../shared/runtime/function-names.js';
import { getDependencies } from '../shared/lifecycle/dependencies.js';
import { drainNodeClaim as drain, type DrainInput } from '../shared/lifecycle/termination/drain.js';

import type { ActivityFunctionDefinition } from '../shared/runtime/definitions.js';
import { registerWithAzureFunctions } from '../shared/runtime/azure-functions.js';

/** Activity: one drain pass over a deleted NodeClaim's Node (taint, evict, delete after the grace period). */
export const drainNodeClaim: ActivityFunctionDefinition = {
  kind: 'activity',
  name: TerminationNames.drain,
  handler: (input) => drain(getDependencies(), input as DrainInput),
};

registerWithAzureFunctions(drainNodeClaim);
