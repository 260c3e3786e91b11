// The instance types a provisioning window offers each AKSNodeClass (and each NodePool, with its
// NodeOverlays): the region's offerings (reserved ones counting the slots this cluster's NodeClaims
// hold), the price book launch orders offerings by, and the offerings failure memory holds back. One
// place builds it, so a window and a what-if choose from the same catalog. Each class's list is built
// once per catalog.
import type { CloudProvider } from '../../cloudprovider/types.js';
import { overlaidInstanceTypes } from '../../decisions/node-overlays.js';
import { priceOf } from '../../decisions/prices/price-book.js';
import { instanceTypesFromOfferings } from '../../decisions/scheduling/catalog-instance-types.js';
import type { InstanceType } from '../../decisions/scheduling/types.js';
import type { AKSNodeClass } from '../../models/aks-node-class.js';
import type { NodePool } from '../../models/karpenter.js';
import type { LifecycleDependencies } from '../dependencies.js';
import type { ProvisioningState } from './cluster-state.js';

/** The instance types each AKSNodeClass (and each NodePool, with its NodeOverlays) launches, as provision.ts builds them. */
export interface Catalog {
  forClass(nodeClass: AKSNodeClass): InstanceType[];
  forPool(nodePool: NodePool, nodeClass: AKSNodeClass): InstanceType[];
  prices: ReturnType<CloudProvider['prices']>;
  overlaid?: (nodePoolName: string, types: InstanceType[]) => InstanceType[];
}

export async function instanceTypeCatalog(
  deps: LifecycleDependencies,
  state: ProvisioningState,
): Promise<Catalog> {
  const offerings = await deps.cloud.offerings({ nodeClaims: state.nodeClaims });
  const prices = deps.cloud.prices();
  const unavailable = await deps.cloud.unavailableOfferings();
  const overlays = await deps.cloud.nodeOverlays(state.nodePools);
  const byClass = new Map<string, InstanceType[]>();
  const forClass = (nodeClass: AKSNodeClass) => {
    let types = byClass.get(nodeClass.metadata.name);
    if (!types) {
      types = instanceTypesFromOfferings(offerings, {
        ...deps.cloud.capacityOptions(nodeClass),
        unavailable,
        priceOf: (vmSize, capacityType) => priceOf(prices, vmSize, capacityType),
      });
      byClass.set(nodeClass.metadata.name, types);
    }
    return types;
  };
  const overlaid = overlays
    ? (nodePoolName: string, types: InstanceType[]) => overlaidInstanceTypes(overlays, nodePoolName, types)
    : undefined;
  return {
    forClass,
    forPool: (nodePool, nodeClass) =>
      overlaid?.(nodePool.metadata.name, forClass(nodeClass)) ?? forClass(nodeClass),
    prices,
    ...(overlaid ? { overlaid } : {}),
  };
}
