import { provisioningBatcher, ProvisioningNames } from '../shared/lifecycle/provisioning/batcher.js';
import type { OrchestrationFunctionDefinition } from '../shared/runtime/definitions.js';
import { registerWithAzureFunctions } from '../shared/runtime/azure-functions.js';

/** Durable orchestration (singleton): batches provisionable-pod signals into windows, one solve each. */
export const provisioningBatcherFunction: OrchestrationFunctionDefinition = {
  kind: 'orchestration',
  name: ProvisioningNames.orchestration,
  handler: provisioningBatcher,
};

registerWithAzureFunctions(provisioningBatcherFunction);
