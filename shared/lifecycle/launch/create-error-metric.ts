// Karpenter's cloud-provider error counter for a failed VM creation, by NodePool and stable reason, and
// this app's count of VM creations tried by outcome, whose ratio is the first-attempt success rate.
import type { LifecycleDependencies } from '../dependencies.js';

export function countCreateError(
  deps: Pick<LifecycleDependencies, 'metrics'>,
  nodePool: string | undefined,
  reason: string,
): void {
  deps.metrics.increment('karpenter_cloudprovider_errors_total', {
    // Upstream's controller label names the controller that made the call: launch is nodeclaim.lifecycle's.
    controller: 'nodeclaim.lifecycle',
    nodepool: nodePool ?? '',
    method: 'Create',
    provider: 'azure',
    error: reason,
  });
}

/** One VM creation tried for a NodeClaim ended: its VM came up, or its PUT or creation failed. */
export function countLaunchAttempt(
  deps: Pick<LifecycleDependencies, 'metrics'>,
  nodePool: string | undefined,
  outcome: 'succeeded' | 'failed',
): void {
  deps.metrics.increment('karpenter_nodeclaims_launch_attempts_total', { nodepool: nodePool ?? '', outcome });
}
