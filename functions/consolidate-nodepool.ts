import {
  consolidationOrchestrator,
  ConsolidationNames,
} from '../shared/lifecycle/disruption/consolidation.js';
import type { OrchestrationFunctionDefinition } from '../shared/runtime/definitions.js';
import { registerWithAzureFunctions } from '../shared/runtime/azure-functions.js';

/** Durable orchestration: waits the validation delay, then re-validates and executes a consolidation. */
export const consolidateNodePool: OrchestrationFunctionDefinition = {
  kind: 'orchestration',
  name: ConsolidationNames.orchestration,
  handler: consolidationOrchestrator,
};

registerWithAzureFunctions(consolidateNodePool);
