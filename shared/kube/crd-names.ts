// Coordinates of the custom resources as the Kubernetes API serves them, for CustomObjectsApi calls
// (`{ group, version, plural }`) and for building `apiVersion` strings. Must match infra/k8s/crds/.
import { AKS_GROUP, AKS_STORAGE_VERSION } from '../models/aks-node-class.js';
import { CAPACITY_BUFFER_GROUP, CAPACITY_BUFFER_VERSION } from '../models/capacity-buffer.js';
import { KARPENTER_GROUP, KARPENTER_VERSION } from '../models/karpenter.js';
import { NODE_OVERLAY_VERSION } from '../models/node-overlay.js';

export interface CustomResourceName {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
}

export const NodePoolResource = {
  group: KARPENTER_GROUP,
  version: KARPENTER_VERSION,
  plural: 'nodepools',
  kind: 'NodePool',
} as const satisfies CustomResourceName;

export const NodeClaimResource = {
  group: KARPENTER_GROUP,
  version: KARPENTER_VERSION,
  plural: 'nodeclaims',
  kind: 'NodeClaim',
} as const satisfies CustomResourceName;

/** The stored version; adapters read and write AKSNodeClasses through it. */
export const AKSNodeClassResource = {
  group: AKS_GROUP,
  version: AKS_STORAGE_VERSION,
  plural: 'aksnodeclasses',
  kind: 'AKSNodeClass',
} as const satisfies CustomResourceName;

/** The older served version that existing manifests (such as the seed example) use. */
export const AKSNodeClassV1Alpha2Resource = {
  ...AKSNodeClassResource,
  version: 'v1alpha2',
} as const satisfies CustomResourceName;

/** `group/version`, as written in an object's `apiVersion`. */
export function apiVersionOf(resource: Pick<CustomResourceName, 'group' | 'version'>): string {
  return `${resource.group}/${resource.version}`;
}

/** karpenter.sh/v1alpha1 NodeOverlay (infra/k8s/crds/karpenter.sh_nodeoverlays.yaml). */
export const NodeOverlayResource = {
  group: KARPENTER_GROUP,
  version: NODE_OVERLAY_VERSION,
  plural: 'nodeoverlays',
  kind: 'NodeOverlay',
} as const satisfies CustomResourceName;

/** autoscaling.x-k8s.io/v1beta1 CapacityBuffer, namespaced (infra/k8s/crds/autoscaling.x-k8s.io_capacitybuffers.yaml). */
export const CapacityBufferResource = {
  group: CAPACITY_BUFFER_GROUP,
  version: CAPACITY_BUFFER_VERSION,
  plural: 'capacitybuffers',
  kind: 'CapacityBuffer',
} as const satisfies CustomResourceName;
