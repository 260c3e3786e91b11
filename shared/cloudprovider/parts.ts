// What the Azure cloud provider is built from: the ARM adapters it calls (VMs, the SKU catalog, the image
// gallery, Capacity Reservation Groups, the unavailable-offerings memory, the price book, the quotas'
// usage and the spot placement scores) and the few cluster reads Azure's side of a launch needs (the
// bootstrap token, the NodeClaims that claim a reservation slot, NodeOverlays). Declared here rather than
// taken from the lifecycle's dependencies so this folder never imports shared/lifecycle/: the lifecycle
// depends on the cloud provider, not back.
import type { CapacityReservationGroups } from '../azure/capacity-reservations.js';
import type { ComputeUsages } from '../azure/compute-usages.js';
import type { PlacementScoresReader } from '../azure/placement-scores.js';
import type { NodeImageVersions } from '../azure/node-image-versions.js';
import type { ResourceSkuCatalog } from '../azure/resource-skus.js';
import type { PriceCatalog } from '../azure/retail-prices.js';
import type { UnavailableOfferingsStore } from '../azure/unavailable-offerings.js';
import type { VirtualMachines } from '../azure/virtual-machines.js';
import type { Settings } from '../config/settings.js';
import type { KubeClients } from '../kube/client.js';
import type { KarpenterObjects } from '../kube/custom-objects.js';
import type { Logger } from '../observability/logger.js';

export interface CloudProviderParts {
  settings: Settings;
  log: Logger;
  now: () => Date;
  kube: () => Promise<KubeClients>;
  objects: KarpenterObjects;
  vms: VirtualMachines;
  skus: ResourceSkuCatalog;
  images: NodeImageVersions;
  unavailable: UnavailableOfferingsStore;
  /**
   * VM prices of the region: the shipped table until the Retail Prices API answers, refreshed every
   * 12 h. Provisioning's solve and launch's offering order read the same book.
   */
  pricing: PriceCatalog;
  /** The Capacity Reservation Groups of CAPACITY_RESERVATION_GROUP_IDS, read through a short cache. */
  reservations: CapacityReservationGroups;
  /** The region's vCPU quotas and their usage, read through a short cache (quota known before the PUT). */
  usages: Pick<ComputeUsages, 'read' | 'invalidate'>;
  /** Azure's spot placement scores per size and zone, cached for a TTL. */
  placementScores: Pick<PlacementScoresReader, 'scores'>;
}
