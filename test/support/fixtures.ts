// The Karpenter objects tests create on the shared control plane, built one way.
import { exampleRequirements } from '../../local/scenarios/scenario.js';
import type { AKSNodeClass, NodeClassReference } from '../../shared/models/index.js';

/** Small on-demand amd64 D-series VMs: the example NodePool's requirements (test/fixtures/general-purpose.yaml). */
export { exampleRequirements };

export function nodeClass(name: string, imageFamily: AKSNodeClass['spec']['imageFamily']): AKSNodeClass {
  return {
    apiVersion: 'karpenter.azure.com/v1beta1',
    kind: 'AKSNodeClass',
    metadata: { name },
    spec: { imageFamily },
  };
}

export function nodeClassRef(name: string): NodeClassReference {
  return { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name };
}
