// Starting the launch monitor for a NodeClaim, once: after a PUT, or later for a launched NodeClaim whose
// monitor went missing (the process stopped between the status write and startNew).
import { findCondition } from '../decisions/conditions.js';
import { vmNameFor } from '../decisions/vm-spec.js';
import type { NodeClaim } from '../models/index.js';
import { ConditionTypes, WellKnown } from '../models/karpenter.js';
import type { HandlerContext } from '../runtime/definitions.js';
import { catalogOfferings } from './catalog-offerings.js';
import type { LifecycleDependencies } from './dependencies.js';
import { offeringOfVm } from './launch-vm.js';
import { LaunchMonitorNames, launchMonitorInstanceId, type LaunchMonitorInput } from './launch-monitor.js';

export async function startLaunchMonitor(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  context: Pick<HandlerContext, 'orchestrations'>,
  input: LaunchMonitorInput,
): Promise<void> {
  const instanceId = launchMonitorInstanceId(nodeClaim.metadata.uid ?? '');
  const existing = await context.orchestrations.getStatus(instanceId);
  if (existing) return;
  try {
    await context.orchestrations.startNew(LaunchMonitorNames.orchestration, { instanceId, input });
  } catch (error) {
    // Another delivery started it between our check and our start: that is the outcome we wanted.
    if (await context.orchestrations.getStatus(instanceId)) return;
    throw error;
  }
}

/**
 * A NodeClaim with a providerID whose launch outcome is still unknown and whose monitor is missing (for
 * example, the process stopped between the status write and startNew) gets a monitor that polls by GET.
 */
export async function ensureLaunchMonitor(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  context: Pick<HandlerContext, 'orchestrations'>,
): Promise<void> {
  const launched = findCondition(nodeClaim.status?.conditions, ConditionTypes.launched);
  if (launched?.status === 'True' || launched?.status === 'False') return;
  const instanceId = launchMonitorInstanceId(nodeClaim.metadata.uid ?? '');
  if (await context.orchestrations.getStatus(instanceId)) return;
  const vmName = vmNameFor(nodeClaim.metadata.name);
  const vm = await deps.vms.get(vmName);
  const offerings = await catalogOfferings(deps);
  const offering = vm ? offeringOfVm(vm, offerings) : undefined;
  if (!offering) return;
  const nodePool = nodeClaim.metadata.labels?.[WellKnown.nodePoolLabel];
  await startLaunchMonitor(deps, nodeClaim, context, {
    nodeClaim: {
      name: nodeClaim.metadata.name,
      uid: nodeClaim.metadata.uid ?? '',
      ...(nodePool ? { nodePool } : {}),
    },
    vmName,
    offering,
    startedAt: launched?.lastTransitionTime ?? deps.now().toISOString(),
    pollIntervalSeconds: deps.settings.launch.pollIntervalSeconds,
    maxPollIntervalSeconds: deps.settings.launch.maxPollIntervalSeconds,
    deadlineMinutes: deps.settings.launch.deadlineMinutes,
  });
}
