import { ReplacementNames } from '../shared/runtime/function-names.js';
import { replacementOrchestrator } from '../shared/lifecycle/disruption/replacement.js';
import type { OrchestrationFunctionDefinition } from '../shared/runtime/definitions.js';
import { registerWithAzureFunctions } from '../shared/runtime/azure-functions.js';

/** Durable orchestration: replaces one drifted NodeClaim (taint, launch replacement, wait, delete old). */
export const replaceNodeClaim: OrchestrationFunctionDefinition = {
  kind: 'orchestration',
  name: ReplacementNames.orchestration,
  handler: replacementOrchestrator,
};

registerWithAzureFunctions(replaceNodeClaim);
