// The spot eviction notice's decisions: which Node carries one (the bridge's test) and when the event
// handler starts the repair at once instead of leaving it to the sweep.
import { describe, expect, it } from 'vitest';
import {
  carriesEvictionNotice,
  evictionNoticeMatch,
  evictionNoticeVerdict,
} from '../../shared/decisions/node-repair/eviction-notice.js';
import { AZURE_REPAIR_POLICIES, type RepairPolicy } from '../../shared/decisions/node-repair/policies.js';
import type { NodeClaim } from '../../shared/models/karpenter.js';
import type { Node, NodeCondition } from '../../shared/models/kube.js';

const now = new Date('2026-12-02T00:00:00Z');
const notice: NodeCondition = {
  type: 'PreemptionScheduled',
  status: 'True',
  lastTransitionTime: now.toISOString(),
};

function node(conditions: NodeCondition[], extra: Partial<Node['metadata']> = {}, tainted = false): Node {
  return {
    metadata: { name: 'aks-spot-1', uid: 'node-uid', ...extra },
    spec: {
      providerID: 'azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm',
      ...(tainted ? { taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' as const }] } : {}),
    },
    status: { conditions: [{ type: 'Ready', status: 'True' }, ...conditions] },
  };
}

function nodeClaim(
  options: { nodePool?: string; deleting?: boolean; markedReason?: string } = { nodePool: 'spot' },
): NodeClaim {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name: 'spot-abc12',
      uid: 'claim-uid',
      ...(options.nodePool ? { labels: { 'karpenter.sh/nodepool': options.nodePool } } : {}),
      ...(options.deleting ? { deletionTimestamp: now.toISOString() } : {}),
    },
    spec: {
      nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'x' },
      requirements: [],
    },
    status: {
      conditions: options.markedReason
        ? [
            {
              type: 'DisruptionReason',
              status: 'True',
              reason: options.markedReason,
              message: '',
              lastTransitionTime: now.toISOString(),
            },
          ]
        : [],
    },
  };
}

const verdict = (
  n: Node,
  c: NodeClaim | undefined,
  policies: readonly RepairPolicy[] = AZURE_REPAIR_POLICIES,
) => evictionNoticeVerdict({ node: n, nodeClaim: c, match: evictionNoticeMatch(n, policies, now), now });

describe('carriesEvictionNotice', () => {
  it('is PreemptionScheduled=True, nothing else', () => {
    expect(carriesEvictionNotice(node([notice]))).toBe(true);
    expect(carriesEvictionNotice(node([{ ...notice, status: 'False' }]))).toBe(false);
    expect(carriesEvictionNotice(node([{ ...notice, status: 'Unknown' }]))).toBe(false);
    expect(carriesEvictionNotice(node([]))).toBe(false);
    expect(carriesEvictionNotice({})).toBe(false);
  });
});

describe('evictionNoticeMatch (the check before any read)', () => {
  it('matches only the policies with the preempted action, toleration over or not', () => {
    expect(evictionNoticeMatch(node([notice]), AZURE_REPAIR_POLICIES, now)?.policy.action).toBe('preempted');
    const notReady: NodeCondition = {
      type: 'Ready',
      status: 'False',
      lastTransitionTime: '2020-01-01T00:00:00Z',
    };
    expect(
      evictionNoticeMatch({ ...node([]), status: { conditions: [notReady] } }, AZURE_REPAIR_POLICIES, now),
    ).toBe(undefined);
  });
});

describe('evictionNoticeVerdict', () => {
  it('starts the repair of a NodePool NodeClaim whose Node carries the notice, naming the NodePool', () => {
    const result = verdict(node([notice]), nodeClaim({ nodePool: 'spot' }));
    expect(result).toMatchObject({ repairNow: true, nodePool: 'spot' });
    expect(result.repairNow && result.match.policy.action).toBe('preempted');
  });

  it('leaves a Node without the notice, or one whose other conditions are unhealthy, to the sweep', () => {
    expect(verdict(node([]), nodeClaim()).repairNow).toBe(false);
    const notReady = node([]);
    notReady.status = {
      conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: '2020-01-01T00:00:00Z' }],
    };
    expect(verdict(notReady, nodeClaim())).toEqual({
      repairNow: false,
      why: 'no repair policy treats a condition of the Node as preemption',
    });
  });

  it('follows the repair policies: none with the preempted action, or a toleration not yet over', () => {
    const withoutPreemption = AZURE_REPAIR_POLICIES.filter((p) => p.action !== 'preempted');
    expect(verdict(node([notice]), nodeClaim(), withoutPreemption).repairNow).toBe(false);
    const tolerated: RepairPolicy[] = [
      {
        conditionType: 'PreemptionScheduled',
        conditionStatus: 'True',
        tolerationMs: 10_000,
        action: 'preempted',
      },
    ];
    expect(verdict(node([notice]), nodeClaim(), tolerated)).toEqual({
      repairNow: false,
      why: 'the preemption toleration has not ended',
    });
  });

  it('acts only on Nodes of our NodeClaims that belong to a NodePool', () => {
    expect(verdict(node([notice]), undefined)).toEqual({
      repairNow: false,
      why: 'the Node belongs to no NodeClaim',
    });
    expect(verdict(node([notice]), nodeClaim({}))).toEqual({
      repairNow: false,
      why: 'the NodeClaim belongs to no NodePool',
    });
  });

  it('is a no-op once the node is on its way out: deleting, marked, or tainted disrupted', () => {
    const deleting = { repairNow: false, why: 'the node is being deleted' };
    const disrupting = { repairNow: false, why: 'the node is already being disrupted' };
    expect(verdict(node([notice]), nodeClaim({ nodePool: 'spot', deleting: true }))).toEqual(deleting);
    expect(verdict(node([notice], { deletionTimestamp: now.toISOString() }), nodeClaim())).toEqual(deleting);
    expect(verdict(node([notice]), nodeClaim({ nodePool: 'spot', markedReason: 'Unhealthy' }))).toEqual(
      disrupting,
    );
    expect(verdict(node([notice]), nodeClaim({ nodePool: 'spot', markedReason: 'Drifted' }))).toEqual(
      disrupting,
    );
    expect(verdict(node([notice], {}, true), nodeClaim())).toEqual(disrupting);
  });
});
