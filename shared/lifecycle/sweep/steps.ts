// The sweep's steps, in the one order they run. Each step gets the same read-once view of the cluster,
// decides per object with pure functions (no request for an object that needs nothing), and writes only
// what changed. A new step is a file that exports a SweepStep (step.ts) and one entry here (docs/design.md,
// "Where new code goes").
//
// The order matters:
// - launch first, so a NodeClaim blocked by a class that now exists launches in this sweep, then the
//   launch monitors of launched NodeClaims whose outcome is still unknown;
// - registration before initialization (a Node that joined Ready can initialize in the same sweep), and
//   both before liveness (a Node that registered just now must not be timed out from the stale read);
// - pod events before anything that reads Consolidatable, drift marking before the disruption step (a
//   node that drifted in this sweep can be replaced in the same sweep), and between them the rollouts
//   (a NodePool that drifted in this sweep starts its rollout workflow, whose floor the drift method
//   obeys); the disruption step asks every disruption method in the order of
//   disruption/methods/methods.ts; static NodePools after it (replacements just started are then
//   already visible as in flight, not missing replicas);
// - status last: NodePool status counts the nodes the steps above launched, registered or deleted;
//   NodeOverlay status after it, since it reads nothing the others write; CapacityBuffer status after
//   that (it too only signals provisioning, for buffers no pod event names); then
//   the metrics gauges, which report that status.
// Orphan VM collection has its own timer (functions/triggers.ts): listing VMs on every sweep
// would spend ARM's List VMs quota.
import { disruptionStep } from '../disruption/disruption-step.js';
import { driftStep } from '../disruption/drift-step.js';
import { podEventsStep } from '../disruption/pod-events-step.js';
import { rolloutStep } from '../disruption/rollout/rollout-step.js';
import { staticNodePoolsStep } from './steps/static-nodepools.js';
import { statusStep } from './status-step.js';
import { capacityBuffersStep } from './steps/capacity-buffers.js';
import type { SweepStep } from '../sweep-step/sweep-step.js';
import { initializationStep } from './steps/initialization.js';
import { launchLeftoversStep } from './steps/launch-leftovers.js';
import { launchMonitorStep } from './steps/launch-monitor.js';
import { launchStep } from './steps/launch.js';
import { livenessStep } from './steps/liveness.js';
import { metricsStep } from './steps/metrics.js';
import { nodeOverlayStatusStep } from './steps/node-overlay-status.js';
import { registrationStep } from './steps/registration.js';
import { terminationStep } from './steps/termination.js';

export const lifecycleSteps: readonly SweepStep[] = [
  launchStep,
  launchMonitorStep,
  registrationStep,
  initializationStep,
  livenessStep,
  terminationStep,
  launchLeftoversStep,
  podEventsStep,
  driftStep,
  rolloutStep,
  disruptionStep,
  staticNodePoolsStep,
  statusStep,
  nodeOverlayStatusStep,
  capacityBuffersStep,
  metricsStep,
];
