// The hand-off from a VM whose creation failed with a transient error to a relaunch of the same NodeClaim.
// Launch PUTs are create-only, so the failed VM must be gone before launch PUTs again: the NodeClaim is
// marked Launched=Unknown LaunchRetrying, the VM deleted (the monitor calls this again on a timer until it
// is gone), the retry counted in an annotation, and only then the providerID cleared, which is what lets
// the normal launch path (its event, or the sweep's launch step) launch it again under a new monitor. The
// count and the release are one change through the NodeClaim writer, which stores the annotation before
// the status, so the order holds across a crash. Each
// call reads where the hand-off stands (decisions/launch-retry.ts), so a call repeated after a crash at any
// line converges and never touches a VM launched after the hand-off.
import { findCondition } from '../../decisions/conditions.js';
import {
  LAUNCH_RETRIES_ANNOTATION,
  LAUNCH_RETRYING_REASON,
  launchRetriesOf,
  relaunchStage,
  type RelaunchProgress,
} from '../../decisions/launch-retry.js';
import { applyLifecycleConditions } from '../../decisions/lifecycle-conditions.js';
import type { LaunchFailure } from '../../cloudprovider/types.js';
import type { NodeClaim } from '../../models/index.js';
import { ConditionTypes } from '../../models/karpenter.js';
import type { LifecycleDependencies } from '../dependencies.js';

/** What the hand-off touches: the NodeClaim, the VM, the event and metric of a retry, the clock, the log. */
type RelaunchPorts = Pick<LifecycleDependencies, 'objects' | 'cloud' | 'events' | 'metrics' | 'now' | 'log'>;
import { nodeClaimAfter, nodeClaimTarget, writeNodeClaim } from '../nodeclaims/nodeclaim-writes.js';
import type { LaunchMonitorInput } from './launch-monitor.js';
import { countCreateError, countLaunchAttempt } from './create-error-metric.js';

export async function handOffToRelaunch(
  deps: RelaunchPorts,
  monitor: LaunchMonitorInput,
  failure: LaunchFailure,
  message: string,
): Promise<RelaunchProgress> {
  const log = deps.log.with({ nodeClaim: monitor.nodeClaim.name, nodeClaimUid: monitor.nodeClaim.uid });
  const monitorRetries = monitor.retries ?? 0;
  const found = await deps.objects.nodeClaims.get(monitor.nodeClaim.name);
  if (!found || found.metadata.uid !== monitor.nodeClaim.uid) {
    // Nothing to launch again; the VM this monitor watched is removed rather than left orphaned.
    await deps.cloud.delete(monitor.vmName);
    return 'HandedOff';
  }
  let nodeClaim: NodeClaim = found;
  const stage = relaunchStage(stateOf(nodeClaim), monitorRetries);
  if (stage === 'done') return 'HandedOff';

  if (stage === 'hand-off') {
    const before = findCondition(nodeClaim.status?.conditions, ConditionTypes.launched);
    const marked = nodeClaimAfter(
      await writeNodeClaim(deps.objects, nodeClaim, (current) => ({
        status: {
          ...current.status,
          conditions: applyLifecycleConditions(
            current.status?.conditions,
            [{ type: ConditionTypes.launched, status: 'Unknown', reason: LAUNCH_RETRYING_REASON, message }],
            deps.now(),
          ),
        },
      })),
    );
    if (!marked) return 'HandedOff';
    nodeClaim = marked;
    if (before?.reason !== LAUNCH_RETRYING_REASON) {
      await deps.events.warning(nodeClaimTarget(nodeClaim), LAUNCH_RETRYING_REASON, message);
      countCreateError(deps, monitor.nodeClaim.nodePool, failure.reason);
      countLaunchAttempt(deps, monitor.nodeClaim.nodePool, 'failed');
      log.warn('launch failed with a transient error; launching the NodeClaim again', {
        azureCode: failure.cloudCode,
        detail: failure.message,
        retry: monitorRetries + 1,
        vmName: monitor.vmName,
      });
    }
    const vm = await deps.cloud.get(monitor.vmName);
    if (vm) {
      if (vm.state !== 'Deleting') await deps.cloud.delete(monitor.vmName);
      return 'VmDeleting';
    }
  }
  await countAndRelease(deps, nodeClaim, monitorRetries);
  return 'HandedOff';
}

function stateOf(nodeClaim: NodeClaim): Parameters<typeof relaunchStage>[0] {
  const launched = findCondition(nodeClaim.status?.conditions, ConditionTypes.launched);
  return {
    retries: launchRetriesOf(nodeClaim.metadata.annotations),
    deleting: Boolean(nodeClaim.metadata.deletionTimestamp),
    ...(nodeClaim.status?.providerID ? { providerID: nodeClaim.status.providerID } : {}),
    ...(launched ? { launchedReason: launched.reason } : {}),
  };
}

/**
 * The failed VM is gone: the retry counted in the annotation (from this monitor's count to the next, so a
 * second call counts nothing more) and the failed VM's providerID cleared, in one writer call. The count
 * is metadata and goes first, as the writer's order has it: a crash between the two leaves a counted
 * NodeClaim still carrying the providerID (`release`), which the next call only releases.
 */
async function countAndRelease(
  deps: Pick<RelaunchPorts, 'objects'>,
  nodeClaim: NodeClaim,
  monitorRetries: number,
): Promise<void> {
  await writeNodeClaim(deps.objects, nodeClaim, (current) => {
    const counted: NodeClaim =
      relaunchStage(stateOf(current), monitorRetries) === 'hand-off'
        ? {
            ...current,
            metadata: {
              ...current.metadata,
              annotations: {
                ...current.metadata.annotations,
                [LAUNCH_RETRIES_ANNOTATION]: String(monitorRetries + 1),
              },
            },
          }
        : current;
    if (relaunchStage(stateOf(counted), monitorRetries) !== 'release')
      return { annotations: counted.metadata.annotations ?? {} };
    const { providerID: _released, ...status } = counted.status ?? {};
    return { annotations: counted.metadata.annotations ?? {}, status };
  });
}
