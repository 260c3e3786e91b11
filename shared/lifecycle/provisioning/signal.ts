// A provisionable pod signals the batcher; the first signal after a restart (or ever) starts it. The
// pod itself is not passed on: the window reads every provisionable pod when it closes. New batchers run
// the second version (batcher-v2.ts), under the same singleton instance ID. A signal costs the Durable
// backend an action, so one is not raised when the window that is open already heard a signal within half
// its idle time: that window stays open past now, and its solve will list this pod. A first-version
// batcher found between windows is terminated, and the next signal (the event bridge re-announces a
// provisionable pod every 10 s) starts the second version; one in a window is left to finish it.
import { isOrchestrationActive, type OrchestrationClient } from '../../runtime/definitions.js';
import type { ProvisioningSettings } from '../../config/settings.js';
import { ProvisioningNames } from '../../runtime/function-names.js';
import type { BatcherInput } from './batcher.js';
import type { BatcherV2Status } from './batcher-v2.js';

export type SignalOutcome =
  | 'signalled'
  | 'started'
  /** The open window heard a signal a moment ago and will list the pod: nothing raised. */
  | 'batched'
  /** A first-version batcher between windows was terminated; the next signal starts the second. */
  | 'replacing';

/** Whether the batcher's status says a window is open and heard a signal within half its idle time. */
export function recentlySignalled(customStatus: unknown, now: Date, idleMs: number): boolean {
  if (typeof customStatus !== 'object' || customStatus === null) return false;
  const status = customStatus as BatcherV2Status;
  if (status.state !== 'collecting' || !status.lastSignalAt) return false;
  const sinceMs = now.getTime() - Date.parse(status.lastSignalAt);
  return sinceMs >= 0 && sinceMs < idleMs / 2;
}

export async function signalProvisioning(
  orchestrations: OrchestrationClient,
  settings: ProvisioningSettings,
  now: Date = new Date(),
): Promise<SignalOutcome> {
  const { instanceId, orchestrationV2, orchestration, podEvent } = ProvisioningNames;
  const current = await orchestrations.getStatus(instanceId);
  if (current && isOrchestrationActive(current)) {
    if (
      current.name === orchestrationV2 &&
      recentlySignalled(current.customStatus, now, settings.batchIdleMs)
    )
      return 'batched';
    const state = (current.customStatus as { state?: string } | undefined)?.state;
    if (current.name === orchestration && state === 'waiting') {
      await orchestrations.terminate(instanceId, `replaced by ${orchestrationV2}`);
      return 'replacing';
    }
    try {
      await orchestrations.raiseEvent(instanceId, podEvent);
      return 'signalled';
    } catch (error) {
      // Still running (not ended between the read and the raise): the failure was real.
      if (isOrchestrationActive(await orchestrations.getStatus(instanceId))) throw error;
    }
  }
  const input: BatcherInput = { idleMs: settings.batchIdleMs, maxMs: settings.batchMaxMs };
  try {
    await orchestrations.startNew(orchestrationV2, { instanceId, input });
  } catch (error) {
    // Another pod's handler started it a moment ago; signalling it is all that is left to do.
    const status = await orchestrations.getStatus(instanceId);
    if (!isOrchestrationActive(status)) throw error;
  }
  await orchestrations.raiseEvent(instanceId, podEvent);
  return 'started';
}
