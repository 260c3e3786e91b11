// The Function App's entry point (package.json "main"): importing a function module registers it with
// the Functions host; `definitions` hands the same objects to the local in-process host.
import type { FunctionDefinition } from '../shared/runtime/definitions.js';
import { startTelemetryInFunctionsHost } from '../shared/runtime/azure-functions.js';
import { deleteNodeClaimVm } from './delete-nodeclaim-vm.js';
import { finishNodeClaimTermination } from './finish-nodeclaim-termination.js';
import { launchMonitor } from './launch-monitor.js';
import { lifecycleSweep } from './lifecycle-sweep.js';
import { objectEvents } from './object-events.js';
import { pollVmCreation } from './poll-vm-creation.js';
import { recordLaunchFailure } from './record-launch-failure.js';
import { recordLaunchSuccess } from './record-launch-success.js';
import { terminateNodeClaim } from './terminate-nodeclaim.js';
import { replaceNodeClaim } from './replace-nodeclaim.js';
import { beginNodeClaimReplacement } from './begin-nodeclaim-replacement.js';
import { launchReplacementNodeClaim } from './launch-replacement-nodeclaim.js';
import { checkReplacementNodeClaim } from './check-replacement-nodeclaim.js';
import { completeNodeClaimReplacement } from './complete-nodeclaim-replacement.js';
import { abandonNodeClaimReplacement } from './abandon-nodeclaim-replacement.js';
import { drainNodeClaim } from './drain-nodeclaim.js';
import { collectOrphanVms } from './collect-orphan-vms.js';
import { consolidateNodePool } from './consolidate-nodepool.js';
import { executeConsolidation } from './execute-consolidation.js';
import { provisioningBatcherFunction } from './provisioning-batcher.js';
import { provisionPendingPodsFunction } from './provision-pending-pods.js';

export const definitions: readonly FunctionDefinition[] = [
  objectEvents,
  launchMonitor,
  pollVmCreation,
  recordLaunchSuccess,
  recordLaunchFailure,
  terminateNodeClaim,
  deleteNodeClaimVm,
  finishNodeClaimTermination,
  lifecycleSweep,
  replaceNodeClaim,
  beginNodeClaimReplacement,
  launchReplacementNodeClaim,
  checkReplacementNodeClaim,
  completeNodeClaimReplacement,
  abandonNodeClaimReplacement,
  drainNodeClaim,
  collectOrphanVms,
  consolidateNodePool,
  executeConsolidation,
  provisioningBatcherFunction,
  provisionPendingPodsFunction,
];

startTelemetryInFunctionsHost();
