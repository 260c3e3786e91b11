// A provisionable pod signals the batcher; the first signal after a restart (or ever) starts it. The
// pod itself is not passed on: the window lists every provisionable pod when it closes.
import { isOrchestrationActive, type OrchestrationClient } from '../../runtime/definitions.js';
import type { ProvisioningSettings } from '../../config/settings.js';
import { ProvisioningNames } from '../../runtime/function-names.js';
import type { BatcherInput } from './batcher.js';

export type SignalOutcome = 'signalled' | 'started';

export async function signalProvisioning(
  orchestrations: OrchestrationClient,
  settings: ProvisioningSettings,
): Promise<SignalOutcome> {
  const { instanceId, orchestration, podEvent } = ProvisioningNames;
  try {
    await orchestrations.raiseEvent(instanceId, podEvent);
    return 'signalled';
  } catch (error) {
    const status = await orchestrations.getStatus(instanceId);
    // Running after all (between executions of continue-as-new): the failure was real.
    if (isOrchestrationActive(status)) throw error;
  }
  const input: BatcherInput = { idleMs: settings.batchIdleMs, maxMs: settings.batchMaxMs };
  try {
    await orchestrations.startNew(orchestration, { instanceId, input });
  } catch (error) {
    // Another pod's handler started it a moment ago; signalling it is all that is left to do.
    const status = await orchestrations.getStatus(instanceId);
    if (!isOrchestrationActive(status)) throw error;
  }
  await orchestrations.raiseEvent(instanceId, podEvent);
  return 'started';
}
