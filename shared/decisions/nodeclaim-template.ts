// A NodeClaim as a NodePool's current template describes it: what static NodePools create for a missing
// replica and what drift replacement creates for a drifted node. Names are deterministic, derived from a
// seed the caller chooses (the slot, or the replaced NodeClaim's uid and attempt), so a retry or a
// concurrent sweep creating "the same" NodeClaim gets AlreadyExists instead of a duplicate.
import { createHash } from 'node:crypto';
import type { AKSNodeClass } from '../models/aks-node-class.js';
import {
  KARPENTER_GROUP,
  KARPENTER_VERSION,
  WellKnown,
  type NodeClaim,
  type NodePool,
} from '../models/karpenter.js';
import { hashAnnotations } from './hash.js';

/** Kubernetes names are at most 253 characters, but VM names are 64: keep the whole name short. */
const MAX_POOL_PART = 40;

export function deterministicNodeClaimName(nodePoolName: string, seed: string): string {
  const suffix = createHash('sha256').update(seed).digest('hex').slice(0, 8);
  const pool = nodePoolName.slice(0, MAX_POOL_PART).replace(/[-.]+$/, '');
  return `${pool}-${suffix}`;
}

export function nodeClaimFromTemplate(input: {
  nodePool: NodePool;
  nodeClass: AKSNodeClass | undefined;
  name: string;
  annotations?: Record<string, string>;
}): NodeClaim {
  const { nodePool } = input;
  const template = nodePool.spec.template;
  const spec = template.spec;
  const annotations = {
    ...template.metadata?.annotations,
    ...(input.nodeClass ? hashAnnotations(nodePool, input.nodeClass) : {}),
    ...input.annotations,
  };
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name: input.name,
      labels: { ...template.metadata?.labels, [WellKnown.nodePoolLabel]: nodePool.metadata.name },
      annotations,
      ownerReferences: [
        {
          apiVersion: `${KARPENTER_GROUP}/${KARPENTER_VERSION}`,
          kind: 'NodePool',
          name: nodePool.metadata.name,
          uid: nodePool.metadata.uid ?? '',
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      nodeClassRef: { ...spec.nodeClassRef },
      requirements: spec.requirements.map((r) => ({ ...r, ...(r.values ? { values: [...r.values] } : {}) })),
      ...(spec.taints ? { taints: spec.taints.map((t) => ({ ...t })) } : {}),
      ...(spec.startupTaints ? { startupTaints: spec.startupTaints.map((t) => ({ ...t })) } : {}),
      ...(spec.expireAfter ? { expireAfter: spec.expireAfter } : {}),
      ...(spec.terminationGracePeriod ? { terminationGracePeriod: spec.terminationGracePeriod } : {}),
    },
  };
}
