// The Karpenter objects tests create on the shared control plane, built one way.
import { exampleRequirements } from '../../local/scenarios/scenario.js';
import type { AKSNodeClass, Budget, NodeClassReference, NodePool } from '../../shared/models/index.js';

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

/**
 * A NodePool of the example requirements on one AKSNodeClass; budgets, consolidateAfter and template labels
 * only when given.
 */
export function nodePool(
  name: string,
  nodeClassName: string,
  options: { budgets?: Budget[]; consolidateAfter?: string; labels?: Record<string, string> } = {},
): NodePool {
  const { budgets, consolidateAfter, labels } = options;
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      ...((budgets || consolidateAfter) && {
        disruption: { ...(budgets && { budgets }), ...(consolidateAfter && { consolidateAfter }) },
      }),
      template: {
        ...(labels && { metadata: { labels } }),
        spec: { nodeClassRef: nodeClassRef(nodeClassName), requirements: exampleRequirements },
      },
    },
  };
}
