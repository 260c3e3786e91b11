import { TerminationNames } from '../shared/runtime/function-names.js';
import { terminationOrchestrator } from '../shared/lifecycle/termination/termination.js';
import type { OrchestrationFunctionDefinition } from '../shared/runtime/definitions.js';
import { registerWithAzureFunctions } from '../shared/runtime/azure-functions.js';

/** Durable orchestration: deletes a deleted NodeClaim's VM and Node, then releases its finalizer. */
export const terminateNodeClaim: OrchestrationFunctionDefinition = {
  kind: 'orchestration',
  name: TerminationNames.orchestration,
  handler: terminationOrchestrator,
};

registerWithAzureFunctions(terminateNodeClaim);
