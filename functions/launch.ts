// The launch workflow after the PUT: the monitor orchestration that polls one VM creation until ARM
// reports its outcome, and the activities it calls.
import type { DependencySource } from '../shared/lifecycle/dependencies.js';
import {
  LaunchMonitorActivities,
  launchMonitorOrchestrator,
} from '../shared/lifecycle/launch/launch-monitor.js';
import {
  pollVmCreation,
  recordLaunchSuccess,
  recordMonitorFailure,
} from '../shared/lifecycle/launch/launch-outcome.js';
import { outageTolerantRegistration } from '../shared/lifecycle/durable/durable-activity.js';
import { orchestration, type FunctionDefinition } from '../shared/runtime/definitions.js';
import { LaunchMonitorNames } from '../shared/runtime/function-names.js';

export function launchFunctions(getDependencies: DependencySource): readonly FunctionDefinition[] {
  return [
    orchestration(LaunchMonitorNames.orchestration, launchMonitorOrchestrator),
    // One poll of a VM's creation LRO (restores the serialized SDK poller).
    outageTolerantRegistration(LaunchMonitorActivities.pollVmCreation, (input) =>
      pollVmCreation(getDependencies(), input),
    ),
    // Launched=True, imageID, capacity and allocatable on the NodeClaim.
    outageTolerantRegistration(LaunchMonitorActivities.recordLaunchSuccess, (input) =>
      recordLaunchSuccess(getDependencies(), input),
    ),
    // Launched=False with the classified reason, offering marked unavailable, VM and NodeClaim deleted; or,
    // for a transient failure within the retry bound, the VM deleted and the NodeClaim launched again.
    outageTolerantRegistration(LaunchMonitorActivities.recordLaunchFailure, (input, context) =>
      recordMonitorFailure(getDependencies(), input, context),
    ),
  ];
}
