// A Node as the domain reads it keeps each condition's lastTransitionTime, from the client's models
// (Dates) and from watch events (plain JSON strings): node repair's tolerations count from it, and
// without it a condition with a toleration (Ready=Unknown for 10 minutes) counted from every sweep's
// "now" and never became due.
import type { V1Node } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { AZURE_REPAIR_POLICIES, unhealthyMatch } from '../../shared/decisions/node-repair/policies.js';
import { toDomainNode } from '../../shared/kube/nodes.js';

const since = '2026-12-02T06:00:00Z';
const unknownNode = (lastTransitionTime: Date | string): V1Node =>
  ({
    metadata: { name: 'aks-general-abc12' },
    spec: {
      providerID:
        'azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/aks-general-abc12',
    },
    status: {
      conditions: [
        {
          type: 'Ready',
          status: 'Unknown',
          reason: 'NodeStatusUnknown',
          message: 'Kubelet stopped posting node status.',
          lastHeartbeatTime: lastTransitionTime,
          lastTransitionTime,
        },
      ],
    },
  }) as V1Node;

describe('toDomainNode', () => {
  it.each([
    ['a client model (Date)', new Date(since)],
    ['a watch event (JSON string)', since],
  ])('keeps a condition’s lastTransitionTime from %s', (_from, time) => {
    const node = toDomainNode(unknownNode(time));
    expect(node.status?.conditions).toEqual([
      {
        type: 'Ready',
        status: 'Unknown',
        reason: 'NodeStatusUnknown',
        message: 'Kubelet stopped posting node status.',
        lastTransitionTime: since,
      },
    ]);
  });

  it('so a NotReady node becomes repairable once its toleration has passed since the transition', () => {
    const node = toDomainNode(unknownNode(new Date(since)));
    const tenMinutesLater = new Date(Date.parse(since) + 10 * 60_000);
    const match = unhealthyMatch(node, AZURE_REPAIR_POLICIES, tenMinutesLater);
    expect(match?.repairableAt).toEqual(tenMinutesLater);
  });
});
