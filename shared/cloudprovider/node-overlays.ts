// The NodeOverlays in force, read once per use and evaluated against the region's catalog and every
// NodePool of ours (conflicts are judged across all of them, as upstream's controller does). Provisioning,
// launch and consolidation all take their overlaid prices and capacity from here, so the instance type
// a solve judged cheapest is the one launch tries first and consolidation prices a node as launch would.
// The lifecycle writes each overlay's conditions from the same evaluation (lifecycle/node-overlays.ts).
// With the NodeOverlay feature gate off (the default, as upstream) nothing is read and nothing changes.
import { evaluateNodeOverlays, type OverlayEvaluation } from '../decisions/node-overlays.js';
import { isManagedNodePool } from '../decisions/ownership.js';
import { NodeOverlayResource } from '../kube/crd-names.js';
import { CustomObjects } from '../kube/custom-objects.js';
import type { Offering } from '../decisions/offerings.js';
import type { NodePool } from '../models/karpenter.js';
import type { NodeOverlay } from '../models/node-overlay.js';
import type { CloudProviderParts } from './parts.js';
import { catalogOfferings } from './catalog-offerings.js';

export type OverlayDependencies = Pick<CloudProviderParts, 'kube' | 'skus' | 'settings' | 'objects'>;

export function nodeOverlayObjects(deps: Pick<CloudProviderParts, 'kube'>): CustomObjects<NodeOverlay> {
  return new CustomObjects<NodeOverlay>(deps.kube, NodeOverlayResource);
}

/**
 * The last evaluation per catalog array (the SKU adapter returns the same array until its TTL passes), kept
 * while the overlays' specs and the NodePools' names and labels are the same: a launch then costs one list
 * of overlays, not a pass over every NodePool × offering.
 */
const lastEvaluation = new WeakMap<readonly Offering[], { key: string; evaluation: OverlayEvaluation }>();

export async function evaluateOverlays(
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
  return evaluateOverlays(deps, overlays, nodePools);
}
