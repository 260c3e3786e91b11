// The NodeOverlays in force, read once per use and evaluated against the region's catalog and every
// NodePool of ours (conflicts are judged across all of them, as upstream's controller does). Provisioning,
// launch and consolidation all take their overlaid prices and capacity from here, so the instance type
// a solve judged cheapest is the one launch tries first and consolidation prices a node as launch would;
// the sweep writes each overlay's conditions from the same evaluation. With the NodeOverlay feature gate
// off (the default, as upstream) nothing is read and nothing changes.
import { nodeOverlayConditions } from '../decisions/node-overlay-status.js';
import { evaluateNodeOverlays, type OverlayEvaluation } from '../decisions/node-overlays.js';
import { isManagedNodePool } from '../decisions/ownership.js';
import { plainEqual } from '../decisions/plain-equal.js';
import { NodeOverlayResource } from '../kube/crd-names.js';
import { CustomObjects } from '../kube/custom-objects.js';
import type { Offering } from '../decisions/offerings.js';
import type { NodePool } from '../models/karpenter.js';
import type { NodeOverlay } from '../models/node-overlay.js';
import type { LifecycleDependencies } from './dependencies.js';
import { catalogOfferings } from './launch/catalog-offerings.js';
import { writeStatus } from './status-write.js';

type OverlayDependencies = Pick<LifecycleDependencies, 'kube' | 'skus' | 'settings' | 'objects'>;

export function nodeOverlayObjects(deps: Pick<LifecycleDependencies, 'kube'>): CustomObjects<NodeOverlay> {
  return new CustomObjects<NodeOverlay>(deps.kube, NodeOverlayResource);
}

/**
 * The last evaluation per catalog array (the SKU adapter returns the same array until its TTL passes), kept
 * while the overlays' specs and the NodePools' names and labels are the same: a launch then costs one list
 * of overlays, not a pass over every NodePool × offering.
 */
const lastEvaluation = new WeakMap<readonly Offering[], { key: string; evaluation: OverlayEvaluation }>();

async function evaluate(
  deps: OverlayDependencies,
  overlays: readonly NodeOverlay[],
  nodePools: readonly NodePool[] | undefined,
): Promise<OverlayEvaluation> {
  const pools = (nodePools ?? (await deps.objects.nodePools.list()))
    .filter(isManagedNodePool)
    .map((nodePool) => ({
      name: nodePool.metadata.name,
      labels: { ...nodePool.spec.template.metadata?.labels },
    }));
  const offerings = await catalogOfferings(deps);
  const key = JSON.stringify([overlays.map((o) => [o.metadata.name, o.spec]), pools]);
  const cached = lastEvaluation.get(offerings);
  if (cached?.key === key) return cached.evaluation;
  const evaluation = evaluateNodeOverlays(overlays, pools, offerings);
  lastEvaluation.set(offerings, { key, evaluation });
  return evaluation;
}

/**
 * The overlays evaluated, or undefined when the gate is off or no overlay exists. Without `nodePools`
 * (a caller that read only its own), every NodePool is listed once an overlay is found.
 */
export async function currentNodeOverlays(
  deps: OverlayDependencies,
  nodePools?: readonly NodePool[],
): Promise<OverlayEvaluation | undefined> {
  if (!deps.settings.featureGates.NodeOverlay) return undefined;
  const nodeOverlays = nodeOverlayObjects(deps);
  const overlays = await nodeOverlays.list();
  if (overlays.length === 0) return undefined;
  return evaluate(deps, overlays, nodePools);
}

/**
 * Writes ValidationSucceeded and Ready on every overlay whose conditions differ from its evaluation,
 * each guarded by the resourceVersion read (a changed overlay is judged again next time). Returns how
 * many overlays were examined and written.
 */
export async function reconcileNodeOverlayStatuses(
  deps: OverlayDependencies & Pick<LifecycleDependencies, 'now'>,
  nodePools: readonly NodePool[],
): Promise<{ examined: number; written: number }> {
  if (!deps.settings.featureGates.NodeOverlay) return { examined: 0, written: 0 };
  const nodeOverlays = nodeOverlayObjects(deps);
  const overlays = await nodeOverlays.list();
  if (overlays.length === 0) return { examined: 0, written: 0 };
  const evaluation = await evaluate(deps, overlays, nodePools);
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
