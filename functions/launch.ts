// The launch workflow after the PUT: the monitor orchestration that polls one VM creation until ARM
// reports its outcome, and the activities it calls. Both versions are registered: new monitors start as
// the second, and the first stays for the monitors started before the upgrade (docs/design.md, "Names are
// history").
import type { DependencySource } from '../shared/lifecycle/dependencies.js';
import {
  LaunchMonitorActivities,
  launchMonitorOrchestrator,
} from '../shared/lifecycle/launch/launch-monitor.js';
import {
  LaunchMonitorV2Activities,
  launchMonitorV2Orchestrator,
} from '../shared/lifecycle/launch/launch-monitor-v2.js';
import {
  awaitVmCreation,
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
    orchestration(LaunchMonitorNames.orchestrationV2, launchMonitorV2Orchestrator),
    // Polls the VM's creation at the monitor's pace for up to a bounded window, recording Launched=True
    // within the poll that sees it.
    outageTolerantRegistration(LaunchMonitorV2Activities.awaitVmCreation, (input) =>
      awaitVmCreation(getDependencies(), input),
    ),
  ];
}
