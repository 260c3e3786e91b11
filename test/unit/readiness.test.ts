import { describe, expect, it } from 'vitest';
import { readyCondition } from '../../shared/decisions/readiness.js';
import type { Condition, ConditionStatus } from '../../shared/models/index.js';

function conditions(
  spec: Partial<Record<'Launched' | 'Registered' | 'Initialized', [ConditionStatus, string]>>,
): Condition[] {
  return Object.entries(spec).map(([type, [status, reason]]) => ({
    type,
    status,
    reason,
    message: `${reason} message`,
    lastTransitionTime: '2025-01-01T00:00:00.000Z',
  }));
}

describe('readyCondition', () => {
  it.each([
    {
      name: 'all True',
      input: conditions({
        Launched: ['True', 'Launched'],
        Registered: ['True', 'Registered'],
        Initialized: ['True', 'Initialized'],
      }),
      expected: { status: 'True', reason: 'Ready' },
    },
    {
      name: 'nothing reported',
      input: [],
      expected: { status: 'Unknown', reason: 'AwaitingReconciliation' },
    },
    {
      name: 'no conditions at all',
      input: undefined,
      expected: { status: 'Unknown', reason: 'AwaitingReconciliation' },
    },
    {
      name: 'launch in progress',
      input: conditions({ Launched: ['Unknown', 'LaunchInProgress'] }),
      expected: { status: 'Unknown', reason: 'LaunchInProgress' },
    },
    {
      name: 'launched, node not found yet',
      input: conditions({ Launched: ['True', 'Launched'], Registered: ['Unknown', 'NodeNotFound'] }),
      expected: { status: 'Unknown', reason: 'NodeNotFound' },
    },
    {
      name: 'registered, Initialized missing',
      input: conditions({ Launched: ['True', 'Launched'], Registered: ['True', 'Registered'] }),
      expected: { status: 'Unknown', reason: 'AwaitingReconciliation' },
    },
    {
      name: 'registered, startup taint left',
      input: conditions({
        Launched: ['True', 'Launched'],
        Registered: ['True', 'Registered'],
        Initialized: ['Unknown', 'StartupTaintsExist'],
      }),
      expected: { status: 'Unknown', reason: 'StartupTaintsExist' },
    },
    {
      name: 'launch failed',
      input: conditions({ Launched: ['False', 'AllocationFailed'], Registered: ['Unknown', 'NodeNotFound'] }),
      expected: { status: 'False', reason: 'AllocationFailed' },
    },
    {
      name: 'a later False wins over an earlier Unknown',
      input: conditions({
        Launched: ['Unknown', 'LaunchInProgress'],
        Registered: ['False', 'MultipleNodesFound'],
      }),
      expected: { status: 'False', reason: 'MultipleNodesFound' },
    },
    {
      name: 'the first False in lifecycle order is reported',
      input: conditions({
        Registered: ['False', 'MultipleNodesFound'],
        Launched: ['False', 'SkuNotAvailable'],
      }),
      expected: { status: 'False', reason: 'SkuNotAvailable' },
    },
  ])('$name → $expected.status $expected.reason', ({ input, expected }) => {
    const ready = readyCondition(input);
    expect(ready).toMatchObject({ type: 'Ready', ...expected });
  });

  it('carries the failing stage and its message', () => {
    const ready = readyCondition(conditions({ Launched: ['False', 'AllocationFailed'] }));
    expect(ready.message).toBe('Launched: AllocationFailed message');
  });

  it('ignores unrelated conditions', () => {
    const input = [
      ...conditions({
        Launched: ['True', 'Launched'],
        Registered: ['True', 'Registered'],
        Initialized: ['True', 'Initialized'],
      }),
      {
        type: 'Drifted',
        status: 'False' as const,
        reason: 'NotDrifted',
        message: '',
        lastTransitionTime: '2025-01-01T00:00:00.000Z',
      },
    ];
    expect(readyCondition(input).status).toBe('True');
  });
});
