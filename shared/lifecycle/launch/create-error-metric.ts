// Karpenter's cloud-provider error counter for a failed VM creation, by NodePool and stable reason.
import type { LifecycleDependencies } from '../dependencies.js';

export function countCreateError(
  deps: Pick<LifecycleDependencies, 'metrics'>,
  nodePool: string | undefined,
  reason: string,
): void {
  deps.metrics.increment('karpenter_cloudprovider_errors_total', {
    nodepool: nodePool ?? '',
    method: 'Create',
    provider: 'azure',
    error: reason,
  });
}
