// A NodePool of the emulator's Standard_D2as_v5, D2s_v5 and D4s_v5 sizes (on-demand) with D4s_v5 nodes,
// over the in-memory fakes with the emulator's SKU catalog and the shipped prices: what the unit tests of
// the Underutilized methods (multi- and single-node consolidation) simulate against.
import { skuCatalog } from '../../local/arm-emulator/sku-catalog.js';
import type { SkuRecord } from '../../shared/decisions/offerings.js';
import type { NodeClaim, NodePool } from '../../shared/models/karpenter.js';
import { WellKnown } from '../../shared/models/karpenter.js';
import type { Node } from '../../shared/models/kube.js';
import { consolidatingPool } from './consolidation-fixtures.js';
import type { FakeLifecycle } from './fake-lifecycle.js';
import { nodeClass } from './fixtures.js';
import { initializedNodeClaim, nodeOf } from './method-pass.js';

export const CONSOLIDATION_SIZES = ['Standard_D2as_v5', 'Standard_D2s_v5', 'Standard_D4s_v5'];

export function underutilizedPool(
  policy: 'WhenEmptyOrUnderutilized' | 'WhenEmpty' = 'WhenEmptyOrUnderutilized',
): NodePool {
  const pool = consolidatingPool('general', [
    { key: WellKnown.capacityTypeLabel, operator: 'In', values: ['on-demand'] },
    { key: WellKnown.instanceTypeLabel, operator: 'In', values: CONSOLIDATION_SIZES },
  ]);
  return {
    ...pool,
    spec: { ...pool.spec, disruption: { ...pool.spec.disruption, consolidationPolicy: policy } },
  };
}

/** The catalog and the NodePool's AKSNodeClass, as the simulation reads them. */
export function seedConsolidationCatalog(fake: FakeLifecycle, nodePool: NodePool): void {
  // The emulator's catalog is what the SKU adapter reads from it, in ARM's Resource SKU shape.
  fake.skus.push(...(skuCatalog as unknown as SkuRecord[]));
  fake.nodePools.seed(nodePool);
  fake.nodeClasses.seed(nodeClass('default', 'Ubuntu2204'));
}

/** An initialized NodeClaim of `nodePool` and its Ready Standard_D4s_v5 Node in westus2-1. */
export function d4sNode(name: string, nodePool: NodePool): { nodeClaim: NodeClaim; node: Node } {
  const nodeClaim = initializedNodeClaim(name, nodePool);
  const node = nodeOf(nodeClaim, {
    labels: {
      [WellKnown.instanceTypeLabel]: 'Standard_D4s_v5',
      [WellKnown.capacityTypeLabel]: 'on-demand',
      [WellKnown.zoneLabel]: 'westus2-1',
      'kubernetes.io/hostname': `aks-${name}`,
    },
  });
  return { nodeClaim, node };
}
