import { getDependencies } from '../shared/lifecycle/dependencies.js';
import {
  ConsolidationNames,
  executeConsolidation as execute,
  type ConsolidationCommand,
} from '../shared/lifecycle/disruption/consolidation.js';
import type { ActivityFunctionDefinition } from '../shared/runtime/definitions.js';
import { registerWithAzureFunctions } from '../shared/runtime/azure-functions.js';

/** Activity: re-validates a consolidation command against fresh state and deletes what still qualifies. */
export const executeConsolidation: ActivityFunctionDefinition = {
  kind: 'activity',
  name: ConsolidationNames.execute,
  handler: (input, context) => execute(getDependencies(), input as ConsolidationCommand, context),
};

registerWithAzureFunctions(executeConsolidation);
