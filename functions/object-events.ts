import { getDependencies } from '../shared/lifecycle/dependencies.js';
import { handleObjectEvent } from '../shared/lifecycle/object-events.js';
import type { QueueFunctionDefinition } from '../shared/runtime/definitions.js';
import { registerWithAzureFunctions } from '../shared/runtime/azure-functions.js';

/** Queue-triggered: one message per Kubernetes object change, published by the event bridge. */
export const objectEvents: QueueFunctionDefinition = {
  kind: 'queue',
  name: 'objectEvents',
  // Resolved from app settings by the Functions host (and by the local host), like every %NAME%.
  queueName: '%EVENTS_QUEUE_NAME%',
  connection: 'AzureWebJobsStorage',
  handler: (message, context) => handleObjectEvent(getDependencies(), message, context),
};

registerWithAzureFunctions(objectEvents);
