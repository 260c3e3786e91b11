// The hand-off from a VM whose creation failed with a transient error to a relaunch of the same NodeClaim.
// Launch PUTs are create-only, so the failed VM must be gone before launch PUTs again: the NodeClaim is
// marked Launched=Unknown LaunchRetrying, the VM deleted (the monitor calls this again on a timer until it
// is gone), the retry counted in an annotation, and only then the providerID cleared, which is what lets
// the normal launch path (its event, or the sweep's launch step) launch it again under a new monitor. Each
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
import { retryOnConflict } from '../../kube/retry-on-conflict.js';
import type { NodeClaim } from '../../models/index.js';
import { ConditionTypes } from '../../models/karpenter.js';
import type { LifecycleDependencies } from '../dependencies.js';

/** What the hand-off touches: the NodeClaim, the VM, the event and metric of a retry, the clock, the log. */
type RelaunchPorts = Pick<LifecycleDependencies, 'objects' | 'cloud' | 'events' | 'metrics' | 'now' | 'log'>;
import { nodeClaimTarget, updateNodeClaimStatus } from '../nodeclaims/nodeclaim-writes.js';
import type { LaunchMonitorInput } from './launch-monitor.js';
import { countCreateError } from './create-error-metric.js';

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
  let stage = relaunchStage(stateOf(nodeClaim), monitorRetries);
  if (stage === 'done') return 'HandedOff';

  if (stage === 'hand-off') {
    const before = findCondition(nodeClaim.status?.conditions, ConditionTypes.launched);
    const marked = await updateNodeClaimStatus(deps.objects, nodeClaim, (current) => ({
      ...current.status,
      conditions: applyLifecycleConditions(
        current.status?.conditions,
        [{ type: ConditionTypes.launched, status: 'Unknown', reason: LAUNCH_RETRYING_REASON, message }],
        deps.now(),
      ),
    }));
    if (!marked) return 'HandedOff';
    nodeClaim = marked;
    if (before?.reason !== LAUNCH_RETRYING_REASON) {
      await deps.events.warning(nodeClaimTarget(nodeClaim), LAUNCH_RETRYING_REASON, message);
      countCreateError(deps, monitor.nodeClaim.nodePool, failure.reason);
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
    const counted = await countRetry(deps, nodeClaim, monitorRetries);
    if (!counted) return 'HandedOff';
    nodeClaim = counted;
    stage = relaunchStage(stateOf(nodeClaim), monitorRetries);
  }
  if (stage === 'release') await releaseForRelaunch(deps, nodeClaim, monitorRetries);
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

/** The annotation moves from this monitor's count to the next, once: a conflict re-reads and re-decides. */
async function countRetry(
  deps: Pick<RelaunchPorts, 'objects'>,
  nodeClaim: NodeClaim,
  monitorRetries: number,
): Promise<NodeClaim | undefined> {
  return retryOnConflict(
    nodeClaim,
    async (current) => {
      if (current.metadata.uid !== nodeClaim.metadata.uid) return undefined;
      if (relaunchStage(stateOf(current), monitorRetries) !== 'hand-off') return current;
      return deps.objects.nodeClaims.mergePatch(current.metadata.name, {
        metadata: {
          resourceVersion: current.metadata.resourceVersion,
          annotations: { [LAUNCH_RETRIES_ANNOTATION]: String(monitorRetries + 1) },
        },
      });
    },
    () => deps.objects.nodeClaims.get(nodeClaim.metadata.name),
  );
}

/** Clears the failed VM's providerID (a merge patch removes it with null), guarded by resourceVersion. */
async function releaseForRelaunch(
  deps: Pick<RelaunchPorts, 'objects'>,
  nodeClaim: NodeClaim,
  monitorRetries: number,
): Promise<void> {
  await retryOnConflict(
    nodeClaim,
    async (current) => {
      if (current.metadata.uid !== nodeClaim.metadata.uid) return;
      if (relaunchStage(stateOf(current), monitorRetries) !== 'release') return;
      await deps.objects.nodeClaims.mergePatchStatus(current.metadata.name, {
        metadata: { resourceVersion: current.metadata.resourceVersion },
        status: { providerID: null },
      });
    },
    () => deps.objects.nodeClaims.get(nodeClaim.metadata.name),
  );
}
