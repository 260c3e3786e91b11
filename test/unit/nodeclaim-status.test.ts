import { describe, expect, it } from 'vitest';
import { mergeConditions, statusChanged } from '../../shared/decisions/nodeclaim-status.js';
import type { Condition, NodeClaimStatus } from '../../shared/models/index.js';

const T0 = '2025-01-01T00:00:00.000Z';
const launched: Condition = {
  type: 'Launched',
  status: 'True',
  reason: 'Launched',
  message: '',
  lastTransitionTime: T0,
};
const registered: Condition = {
  type: 'Registered',
  status: 'Unknown',
  reason: 'NodeNotFound',
  message: 'm',
  lastTransitionTime: T0,
};

describe('statusChanged', () => {
  it.each<{
    name: string;
    before: NodeClaimStatus | undefined;
    after: NodeClaimStatus | undefined;
    changed: boolean;
  }>([
    {
      name: 'identical',
      before: { providerID: 'p', conditions: [launched, registered] },
      after: { providerID: 'p', conditions: [launched, registered] },
      changed: false,
    },
    {
      name: 'conditions reordered',
      before: { conditions: [launched, registered] },
      after: { conditions: [registered, launched] },
      changed: false,
    },
    { name: 'undefined vs empty', before: undefined, after: { conditions: [] }, changed: false },
    {
      name: 'condition status differs',
      before: { conditions: [registered] },
      after: { conditions: [{ ...registered, status: 'True' }] },
      changed: true,
    },
    {
      name: 'condition message differs',
      before: { conditions: [registered] },
      after: { conditions: [{ ...registered, message: 'n' }] },
      changed: true,
    },
    {
      name: 'condition added',
      before: { conditions: [launched] },
      after: { conditions: [launched, registered] },
      changed: true,
    },
    {
      name: 'condition removed',
      before: { conditions: [launched, registered] },
      after: { conditions: [launched] },
      changed: true,
    },
    {
      name: 'nodeName set',
      before: { conditions: [launched] },
      after: { conditions: [launched], nodeName: 'n1' },
      changed: true,
    },
    {
      name: 'allocatable differs',
      before: { allocatable: { cpu: '1' } },
      after: { allocatable: { cpu: '2' } },
      changed: true,
    },
    {
      name: 'undefined field vs absent',
      before: { providerID: 'p' },
      after: { providerID: 'p', nodeName: undefined },
      changed: false,
    },
  ])('$name → $changed', ({ before, after, changed }) => {
    expect(statusChanged(before, after)).toBe(changed);
  });
});

describe('mergeConditions', () => {
  const now = new Date('2025-01-01T00:10:00.000Z');

  it('returns the same array when nothing changes', () => {
    const current = [launched, registered];
    const merged = mergeConditions(
      current,
      [{ type: 'Launched', status: 'True', reason: 'Launched', message: '' }],
      now,
    );
    expect(merged).toBe(current);
  });

  it('applies several updates, moving lastTransitionTime only on status changes', () => {
    const merged = mergeConditions(
      [launched, registered],
      [
        { type: 'Registered', status: 'Unknown', reason: 'NodeNotFound', message: 'other' },
        { type: 'Initialized', status: 'Unknown', reason: 'NotRegistered', message: '' },
        { type: 'Launched', status: 'False', reason: 'AllocationFailed', message: 'x' },
      ],
      now,
    );
    expect(merged).toEqual([
      {
        ...launched,
        status: 'False',
        reason: 'AllocationFailed',
        message: 'x',
        lastTransitionTime: now.toISOString(),
      },
      { ...registered, message: 'other' },
      {
        type: 'Initialized',
        status: 'Unknown',
        reason: 'NotRegistered',
        message: '',
        lastTransitionTime: now.toISOString(),
      },
    ]);
  });

  it('starts from nothing', () => {
    expect(mergeConditions(undefined, [], now)).toEqual([]);
  });
});
