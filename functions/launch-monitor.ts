import { LaunchMonitorNames } from '../shared/runtime/function-names.js';
import { launchMonitorOrchestrator } from '../shared/lifecycle/launch/launch-monitor.js';
import type { OrchestrationFunctionDefinition } from '../shared/runtime/definitions.js';
import { registerWithAzureFunctions } from '../shared/runtime/azure-functions.js';

/** Durable orchestration: polls one VM creation until ARM reports its outcome, then records it. */
export const launchMonitor: OrchestrationFunctionDefinition = {
  kind: 'orchestration',
  name: LaunchMonitorNames.orchestration,
  handler: launchMonitorOrchestrator,
};

registerWithAzureFunctions(launchMonitor);
