// karpenter.sh/v1alpha1 NodeOverlay as the upstream API defines it (pkg/apis/v1alpha1/nodeoverlay.go):
// only the fields this app reads and writes, under their wire names.
import type { Condition, NodeSelectorRequirement, ObjectMeta, ResourceList } from './kube.js';

export const NODE_OVERLAY_VERSION = 'v1alpha1';

export interface NodeOverlaySpec {
  /** Which NodePools, instance types and offerings the overlay applies to (labels, as a node would carry). */
  requirements: NodeSelectorRequirement[];
  /** A replacement price in USD/h ("0.5"); never set together with priceAdjustment. */
  price?: string;
  /** "+0.1" / "-0.1" (absolute) or "+10%" / "-15%" (relative) to the provider's price. */
  priceAdjustment?: string;
  /** Extended resources added to matching instance types' capacity (never cpu, memory, pods, ephemeral-storage). */
  capacity?: ResourceList;
  /** 1–10000; higher wins; absent counts as 0. */
  weight?: number;
}

export interface NodeOverlay {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: NodeOverlaySpec;
  status?: { conditions?: Condition[] };
}
