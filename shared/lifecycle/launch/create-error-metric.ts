// Karpenter's cloud-provider error counter for a failed VM creation, by NodePool and stable reason.
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
