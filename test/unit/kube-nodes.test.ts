// Nodes as the domain reads them, from the client's models (Dates) and from watch events (plain JSON):
// every field a decision reads survives the conversion, among them a condition's lastTransitionTime, from
// which node repair counts a policy's toleration.
import { describe, expect, it } from 'vitest';
import type { V1Node } from '@kubernetes/client-node';
import { toDomainNode } from '../../shared/kube/nodes.js';
import { unhealthyMatch, AZURE_REPAIR_POLICIES } from '../../shared/decisions/node-repair/policies.js';

const notReadySince = '2026-12-02T06:53:17Z';

function node(transition: Date | string): V1Node {
  return {
    metadata: { name: 'aks-general-1' },
    spec: {
      providerID: 'azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm',
    },
    status: {
      conditions: [
        {
          type: 'Ready',
          status: 'Unknown',
          reason: 'NodeStatusUnknown',
          message: 'Kubelet stopped posting node status.',
          lastTransitionTime: transition as Date,
        },
      ],
    },
  };
}

describe('toDomainNode', () => {
  it('keeps a condition’s lastTransitionTime, from the client’s Date and from a watch’s string', () => {
    for (const transition of [new Date(notReadySince), notReadySince]) {
      const ready = toDomainNode(node(transition)).status?.conditions?.[0];
      expect(ready).toEqual({
        type: 'Ready',
        status: 'Unknown',
        reason: 'NodeStatusUnknown',
        message: 'Kubelet stopped posting node status.',
        lastTransitionTime: notReadySince,
      });
    }
  });

  it('lets node repair’s toleration end: 10 minutes after the transition, not 10 minutes after every read', () => {
    const converted = toDomainNode(node(new Date(notReadySince)));
    const match = unhealthyMatch(converted, AZURE_REPAIR_POLICIES, new Date('2026-12-02T07:05:00Z'));
    expect(match?.repairableAt.toISOString()).toBe('2026-12-02T07:03:17.000Z');
  });
});
