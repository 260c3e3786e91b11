// Each NodeOverlay's conditions (ValidationSucceeded, Ready), written by the sweep from the same
// evaluation provisioning, launch and consolidation price and size offerings with
// (shared/cloudprovider/node-overlays.ts). With the NodeOverlay feature gate off nothing is read or written.
import { nodeOverlayConditions } from '../../decisions/node-overlay-status.js';
import { plainEqual } from '../../decisions/plain-equal.js';
import type { NodePool } from '../../models/karpenter.js';
import { NodeOverlayResource } from '../../kube/crd-names.js';
import { CustomObjects } from '../../kube/custom-objects.js';
import type { NodeOverlay } from '../../models/node-overlay.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { writeStatus } from './status-write.js';

/**
 * Writes ValidationSucceeded and Ready on every overlay whose conditions differ from its evaluation,
 * each guarded by the resourceVersion read (a changed overlay is judged again next time). Returns how
 * many overlays were examined and written.
 */
export async function reconcileNodeOverlayStatuses(
  deps: Pick<LifecycleDependencies, 'kube' | 'settings' | 'cloud' | 'now'>,
  nodePools: readonly NodePool[],
): Promise<{ examined: number; written: number }> {
  if (!deps.settings.featureGates.NodeOverlay) return { examined: 0, written: 0 };
  const nodeOverlays = new CustomObjects<NodeOverlay>(deps.kube, NodeOverlayResource);
  const overlays = await nodeOverlays.list();
  if (overlays.length === 0) return { examined: 0, written: 0 };
  const evaluation = await deps.cloud.evaluateNodeOverlays(overlays, nodePools);
  let written = 0;
  for (const overlay of overlays) {
    const outcome = evaluation.outcomes.get(overlay.metadata.name);
    if (!outcome) continue;
    const current = overlay.status?.conditions ?? [];
    const conditions = nodeOverlayConditions(current, outcome, overlay.metadata.generation, deps.now());
    if (plainEqual(current, conditions)) continue;
    const result = await writeStatus(overlay, { conditions }, (name, patch) =>
      nodeOverlays.mergePatchStatus(name, patch),
    );
    if (result.written) written += 1;
  }
  return { examined: overlays.length, written };
}
