// One provisioning window run directly (as the batcher's activity would), confined to the pods and
// NodePools that carry a launch stack's run label, so a test on the shared control plane never
// provisions another test file's pods.
import {
  provisionPendingPods,
  type ProvisioningReport,
} from '../../shared/lifecycle/provisioning/provision.js';
import type { LaunchStack } from './launch-stack.js';

export function provisionRunWindow(stack: LaunchStack, windowId: string): Promise<ProvisioningReport> {
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
      },
    },
    windowId,
  );
}
