// Objects the consolidation unit tests share: a NodePool that consolidates underutilized nodes at once,
// and a running ReplicaSet pod as consolidation reads it.
import type { ConsolidationPod } from '../../shared/decisions/consolidation/pods.js';
import type { NodePool } from '../../shared/models/karpenter.js';
import type { NodeSelectorRequirement } from '../../shared/models/kube.js';
import { nodeClassRef } from './fixtures.js';

/** WhenEmptyOrUnderutilized after 0 s, on the AKSNodeClass `default`. */
export function consolidatingPool(name: string, requirements: NodeSelectorRequirement[] = []): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name, uid: `uid-${name}` },
    spec: {
      disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '0s' },
      template: { spec: { nodeClassRef: nodeClassRef('default'), requirements } },
    },
  };
}

export function runningPod(
  name: string,
  nodeName: string,
  requests: Record<string, string>,
  labels: Record<string, string> = {},
): ConsolidationPod {
  return {
    namespace: 'default',
    name,
    uid: `uid-${name}`,
    labels,
    annotations: {},
    ownerKinds: ['ReplicaSet'],
    tolerations: [],
    phase: 'Running',
    ready: true,
    nodeName,
    spec: { containers: [{ name: 'app', resources: { requests } }] },
  };
}
