// One provisioning window run directly (as the batcher's activity would), confined to the pods and
// NodePools that carry a launch stack's run label, so a test on the shared control plane never
// provisions another test file's pods. A test may run it under other scheduling policies than the
// stack's settings.
import type { SchedulingPolicySettings } from '../../shared/config/settings.js';
import {
  provisionPendingPods,
  type ProvisioningReport,
} from '../../shared/lifecycle/provisioning/provision.js';
import type { LaunchStack } from './launch-stack.js';

export function provisionRunWindow(
  stack: LaunchStack,
  windowId: string,
  scheduling: SchedulingPolicySettings = stack.deps.settings.scheduling,
): Promise<ProvisioningReport> {
  return provisionPendingPods(
    {
      ...stack.deps,
      settings: {
        ...stack.deps.settings,
        provisioning: {
          batchIdleMs: 1000,
          batchMaxMs: 10_000,
          selector: `${stack.runLabel.key}=${stack.runLabel.value}`,
        },
        scheduling,
      },
    },
    windowId,
  );
}
