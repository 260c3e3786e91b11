// Starting the launch monitor for a NodeClaim, once: after a PUT, or later (from launch or the sweep) for
// a launched NodeClaim whose monitor went missing, ended without writing the outcome, or got stuck.
import { findCondition } from '../../decisions/conditions.js';
import { hasLaunchOutcome } from '../../decisions/launch-in-flight.js';
import { launchMonitorHealth, launchMonitorStuckAfterMs } from '../../decisions/launch-monitor-health.js';
import { launchRetriesOf } from '../../decisions/launch-retry.js';
import type { NodeClaim } from '../../models/index.js';
import { ConditionTypes, WellKnown } from '../../models/karpenter.js';
import type { HandlerContext } from '../../runtime/definitions.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { LaunchMonitorNames } from '../../runtime/function-names.js';
import { launchMonitorInstanceId, type LaunchMonitorInput } from './launch-monitor.js';

export async function startLaunchMonitor(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  context: Pick<HandlerContext, 'orchestrations'>,
  input: LaunchMonitorInput,
): Promise<void> {
  const instanceId = launchMonitorInstanceId(nodeClaim.metadata.uid ?? '', input.retries);
  const existing = await context.orchestrations.getStatus(instanceId);
  if (existing) return;
  // The first poll is paced like the rest (launch-poll-pacing.ts): a burst of launches spreads its first
  // polls instead of sending them all after the minimum interval.
  const inFlightLaunches = await deps.cluster.launchesInFlight().catch(() => undefined);
  const paced = inFlightLaunches === undefined ? input : { ...input, inFlightLaunches };
  try {
    // New monitors run the second version; a first-version monitor still running under this ID counts
    // as the monitor (the status check above reads the ID, whichever version holds it).
    await context.orchestrations.startNew(LaunchMonitorNames.orchestrationV2, { instanceId, input: paced });
  } catch (error) {
    // Another delivery started it between our check and our start: that is the outcome we wanted.
    if (await context.orchestrations.getStatus(instanceId)) return;
    throw error;
  }
}

/**
 * A NodeClaim with a providerID whose launch outcome is still unknown needs a monitor that can write it.
 * One that is missing (the process stopped between the status write and startNew, or the history was
 * lost), ended without writing the outcome (Failed, Terminated) or stuck (no progress for several poll
 * intervals) is replaced by a monitor that polls the VM by GET, so the outcome comes from ARM however the
 * first monitor ended. A stuck one is terminated first and replaced on a later call, once it has ended.
 */
export async function ensureLaunchMonitor(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  context: Pick<HandlerContext, 'orchestrations'>,
): Promise<'healthy' | 'started' | 'terminated' | 'no-vm'> {
  if (hasLaunchOutcome(nodeClaim)) return 'healthy';
  const retries = launchRetriesOf(nodeClaim.metadata.annotations);
  const instanceId = launchMonitorInstanceId(nodeClaim.metadata.uid ?? '', retries);
  const health = launchMonitorHealth(
    await context.orchestrations.getStatus(instanceId),
    deps.now(),
    launchMonitorStuckAfterMs(deps.settings.launch.maxPollIntervalSeconds),
  );
  if (health.state === 'healthy') return 'healthy';
  // The monitor may have written the outcome just before it ended: judge from a fresh read.
  const current = await deps.objects.nodeClaims.get(nodeClaim.metadata.name);
  if (!current || current.metadata.uid !== nodeClaim.metadata.uid || hasLaunchOutcome(current))
    return 'healthy';
  const log = deps.log.with({ nodeClaim: nodeClaim.metadata.name, nodeClaimUid: nodeClaim.metadata.uid });
  if (health.state === 'stuck') {
    log.warn('launch monitor made no progress; terminating it', {
      instanceId,
      silentForMs: health.silentForMs,
    });
    await context.orchestrations.terminate(
      instanceId,
      `no progress for ${Math.round(health.silentForMs / 1000)} s`,
    );
    return 'terminated';
  }
  const vmName = deps.cloud.instanceNameFor(nodeClaim.metadata.name);
  const vm = await deps.cloud.get(vmName);
  const offering = vm ? await deps.cloud.offeringOf(vm, { withReservations: true }) : undefined;
  // No VM behind the providerID: nothing to monitor; registration's timeout deletes the NodeClaim.
  if (!offering) return 'no-vm';
  if (health.state === 'ended') {
    log.warn('launch monitor ended without an outcome; starting another', {
      instanceId,
      runtimeStatus: health.runtimeStatus,
    });
    await context.orchestrations.purge(instanceId);
  }
  const launched = findCondition(current.status?.conditions, ConditionTypes.launched);
  const nodeClass = await deps.objects.nodeClasses.get(current.spec.nodeClassRef.name);
  await startLaunchMonitor(
    deps,
    current,
    context,
    launchMonitorInput(deps, current, {
      vmName,
      offering,
      resources: deps.cloud.resourcesOf(offering, nodeClass),
      startedAt: launched?.lastTransitionTime ?? deps.now().toISOString(),
    }),
  );
  return 'started';
}

/**
 * The monitor's input for a NodeClaim: what the caller knows of this launch (the VM, its offering, the
 * node's resources as the cloud provider gave them), plus what every monitor takes from the NodeClaim
 * (its pool, its relaunch count) and from the settings (the polling pace).
 */
export function launchMonitorInput(
  deps: Pick<LifecycleDependencies, 'settings'>,
  nodeClaim: NodeClaim,
  launch: Omit<
    LaunchMonitorInput,
    'nodeClaim' | 'pollIntervalSeconds' | 'maxPollIntervalSeconds' | 'deadlineMinutes' | 'retries'
  >,
): LaunchMonitorInput {
  const nodePool = nodeClaim.metadata.labels?.[WellKnown.nodePoolLabel];
  const retries = launchRetriesOf(nodeClaim.metadata.annotations);
  return {
    nodeClaim: {
      name: nodeClaim.metadata.name,
      uid: nodeClaim.metadata.uid ?? '',
      ...(nodePool ? { nodePool } : {}),
    },
    ...launch,
    pollIntervalSeconds: deps.settings.launch.pollIntervalSeconds,
    maxPollIntervalSeconds: deps.settings.launch.maxPollIntervalSeconds,
    deadlineMinutes: deps.settings.launch.deadlineMinutes,
    ...(retries > 0 ? { retries } : {}),
  };
}
