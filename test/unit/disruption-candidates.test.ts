import { describe, expect, it } from 'vitest';
import { setCondition } from '../../shared/decisions/conditions.js';
import {
  REPLACEMENT_RETRY_BACKOFF_MS,
  replacementCandidateFromNodeClaim,
  selectReplacementCandidates,
  type ReplacementCandidateInput,
} from '../../shared/decisions/disruption-candidates.js';
import { WellKnown, type NodeClaim, type NodePool } from '../../shared/models/index.js';

const NOW = new Date('2025-03-10T12:00:00Z');

const pool: NodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'general' },
  spec: {
    template: {
      spec: {
        nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
        requirements: [],
      },
    },
  },
};

/** A drifted, initialized, idle NodeClaim of `general`, drifted `minutesAgo` before NOW. */
function drifted(
  name: string,
  minutesAgo: number,
  extra: Partial<ReplacementCandidateInput> = {},
): ReplacementCandidateInput {
  return {
    name,
    nodePool: 'general',
    driftedSince: new Date(NOW.getTime() - minutesAgo * 60_000).toISOString(),
    initialized: true,
    disrupting: false,
    ...extra,
  };
}

interface Case {
  name: string;
  claims: ReplacementCandidateInput[];
  allowed: number;
  expected: string[];
}

const cases: Case[] = [
  {
    name: 'oldest drift first',
    claims: [drifted('a', 1), drifted('b', 30), drifted('c', 10)],
    allowed: 3,
    expected: ['b', 'c', 'a'],
  },
  {
    name: 'ties broken by name',
    claims: [drifted('c', 5), drifted('a', 5), drifted('b', 5)],
    allowed: 3,
    expected: ['a', 'b', 'c'],
  },
  {
    name: 'at most allowed',
    claims: [drifted('a', 4), drifted('b', 3), drifted('c', 2), drifted('d', 1)],
    allowed: 2,
    expected: ['a', 'b'],
  },
  { name: 'allowed 0 selects nothing', claims: [drifted('a', 4)], allowed: 0, expected: [] },
  { name: 'negative allowed selects nothing', claims: [drifted('a', 4)], allowed: -3, expected: [] },
  {
    name: 'fractional allowed rounds down',
    claims: [drifted('a', 4), drifted('b', 3)],
    allowed: 1.9,
    expected: ['a'],
  },
  { name: 'fewer candidates than allowed', claims: [drifted('a', 4)], allowed: 5, expected: ['a'] },
  {
    name: 'the reference scenario: 10 drifted, budget 5 → the 5 oldest at once',
    claims: Array.from({ length: 10 }, (_, i) => drifted(`n${i}`, 100 - i)),
    allowed: 5,
    expected: ['n0', 'n1', 'n2', 'n3', 'n4'],
  },
  {
    name: 'not drifted is skipped',
    claims: [{ ...drifted('a', 9), driftedSince: undefined }, drifted('b', 1)],
    allowed: 5,
    expected: ['b'],
  },
  {
    name: 'not initialized is skipped',
    claims: [drifted('a', 9, { initialized: false }), drifted('b', 1)],
    allowed: 5,
    expected: ['b'],
  },
  {
    name: 'already disrupting is skipped',
    claims: [drifted('a', 9, { disrupting: true }), drifted('b', 1)],
    allowed: 5,
    expected: ['b'],
  },
  {
    name: 'do-not-disrupt "true" is skipped',
    claims: [drifted('a', 9, { doNotDisrupt: 'true' }), drifted('b', 1)],
    allowed: 5,
    expected: ['b'],
  },
  {
    name: 'do-not-disrupt "false" is not protected',
    claims: [drifted('a', 9, { doNotDisrupt: 'false' }), drifted('b', 1)],
    allowed: 5,
    expected: ['a', 'b'],
  },
  {
    name: 'another NodePool is skipped',
    claims: [
      drifted('a', 9, { nodePool: 'other' }),
      drifted('b', 1, { nodePool: undefined }),
      drifted('c', 1),
    ],
    allowed: 5,
    expected: ['c'],
  },
  {
    name: 'in backoff is skipped',
    claims: [drifted('a', 9, { backoffUntil: '2025-03-10T12:00:01Z' }), drifted('b', 1)],
    allowed: 5,
    expected: ['b'],
  },
  {
    name: 'backoff ended is eligible',
    claims: [drifted('a', 9, { backoffUntil: new Date(NOW) }), drifted('b', 1)],
    allowed: 5,
    expected: ['a', 'b'],
  },
  {
    name: 'recent failure without an explicit end backs off for the default',
    claims: [
      drifted('a', 9, { lastAttemptFailedAt: new Date(NOW.getTime() - REPLACEMENT_RETRY_BACKOFF_MS + 1) }),
      drifted('b', 1),
    ],
    allowed: 5,
    expected: ['b'],
  },
  {
    name: 'old failure is eligible again',
    claims: [
      drifted('a', 9, { lastAttemptFailedAt: new Date(NOW.getTime() - REPLACEMENT_RETRY_BACKOFF_MS) }),
      drifted('b', 1),
    ],
    allowed: 5,
    expected: ['a', 'b'],
  },
  {
    name: 'explicit backoff end wins over the failure time',
    claims: [drifted('a', 9, { lastAttemptFailedAt: NOW, backoffUntil: '2025-03-10T11:00:00Z' })],
    allowed: 5,
    expected: ['a'],
  },
  {
    name: 'skipped nodes do not use up the allowance',
    claims: [
      drifted('a', 9, { disrupting: true }),
      drifted('b', 8, { doNotDisrupt: 'true' }),
      drifted('c', 7),
      drifted('d', 6),
    ],
    allowed: 1,
    expected: ['c'],
  },
  {
    name: 'unreadable drift time sorts last',
    claims: [drifted('a', 9, { driftedSince: 'garbage' }), drifted('b', 1)],
    allowed: 5,
    expected: ['b', 'a'],
  },
];

describe('selectReplacementCandidates', () => {
  it.each(cases)('$name', (c) => {
    expect(
      selectReplacementCandidates({ nodePool: pool, nodeClaims: c.claims, allowed: c.allowed, now: NOW }),
    ).toEqual(c.expected);
  });

  it('honours a custom retry backoff', () => {
    const claims = [drifted('a', 9, { lastAttemptFailedAt: new Date(NOW.getTime() - 60_000) })];
    expect(
      selectReplacementCandidates({
        nodePool: pool,
        nodeClaims: claims,
        allowed: 1,
        now: NOW,
        retryBackoffMs: 30_000,
      }),
    ).toEqual(['a']);
    expect(
      selectReplacementCandidates({
        nodePool: pool,
        nodeClaims: claims,
        allowed: 1,
        now: NOW,
        retryBackoffMs: 120_000,
      }),
    ).toEqual([]);
  });
});

describe('replacementCandidateFromNodeClaim', () => {
  function claim(): NodeClaim {
    let conditions = setCondition(
      undefined,
      { type: 'Initialized', status: 'True', reason: 'Initialized' },
      NOW,
    );
    conditions = setCondition(
      conditions,
      { type: 'Drifted', status: 'True', reason: 'NodeClassDrifted' },
      new Date('2025-03-10T11:00:00Z'),
    );
    return {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name: 'general-x', labels: { [WellKnown.nodePoolLabel]: 'general' } },
      spec: {
        nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
        requirements: [],
      },
      status: { providerID: 'azure:///vm', conditions },
    };
  }

  it('reads drift time, initialization and pool from the NodeClaim', () => {
    expect(replacementCandidateFromNodeClaim(claim(), { disrupting: false })).toEqual({
      name: 'general-x',
      nodePool: 'general',
      driftedSince: '2025-03-10T11:00:00.000Z',
      initialized: true,
      disrupting: false,
    });
  });

  it('a Drifted condition that is not True means not drifted', () => {
    const c = claim();
    c.status!.conditions = setCondition(
      c.status!.conditions,
      { type: 'Drifted', status: 'False', reason: 'NotDrifted' },
      NOW,
    );
    expect(replacementCandidateFromNodeClaim(c, { disrupting: false }).driftedSince).toBeUndefined();
  });

  it('do-not-disrupt on either the Node or the NodeClaim protects the node', () => {
    const onNode = replacementCandidateFromNodeClaim(claim(), {
      disrupting: false,
      node: {
        metadata: { name: 'n', annotations: { [WellKnown.doNotDisruptAnnotation]: 'true' } },
        spec: {},
      },
    });
    expect(onNode.doNotDisrupt).toBe('true');
    const c = claim();
    c.metadata.annotations = { [WellKnown.doNotDisruptAnnotation]: 'true' };
    const onClaim = replacementCandidateFromNodeClaim(c, {
      disrupting: false,
      node: {
        metadata: { name: 'n', annotations: { [WellKnown.doNotDisruptAnnotation]: 'false' } },
        spec: {},
      },
    });
    expect(onClaim.doNotDisrupt).toBe('true');
    expect(
      selectReplacementCandidates({ nodePool: pool, nodeClaims: [onNode, onClaim], allowed: 5, now: NOW }),
    ).toEqual([]);
  });

  // upstream pkg/controllers/disruption/types.go NewCandidate: drift is eventual disruption, so a pod
  // block (do-not-disrupt, PDB) holds the node back only while no terminationGracePeriod bounds the drain.
  it('a pod that forbids disruption holds a drifted node back, unless terminationGracePeriod is set', () => {
    const blocked = 'Pod apps/job has "karpenter.sh/do-not-disrupt" annotation (4h)';
    const held = replacementCandidateFromNodeClaim(claim(), { disrupting: false, podsBlock: blocked });
    expect(held.podsBlock).toBe(blocked);
    expect(selectReplacementCandidates({ nodePool: pool, nodeClaims: [held], allowed: 5, now: NOW })).toEqual(
      [],
    );
    const bounded = claim();
    bounded.spec.terminationGracePeriod = '1h';
    const goes = replacementCandidateFromNodeClaim(bounded, { disrupting: false, podsBlock: blocked });
    expect(goes.podsBlock).toBeUndefined();
    expect(selectReplacementCandidates({ nodePool: pool, nodeClaims: [goes], allowed: 5, now: NOW })).toEqual(
      ['general-x'],
    );
  });

  it('carries the caller-known facts through to selection', () => {
    const candidate = replacementCandidateFromNodeClaim(claim(), {
      disrupting: false,
      backoffUntil: '2025-03-10T13:00:00Z',
    });
    expect(candidate.backoffUntil).toBe('2025-03-10T13:00:00Z');
    expect(
      selectReplacementCandidates({ nodePool: pool, nodeClaims: [candidate], allowed: 5, now: NOW }),
    ).toEqual([]);
    const free = replacementCandidateFromNodeClaim(claim(), { disrupting: false });
    expect(selectReplacementCandidates({ nodePool: pool, nodeClaims: [free], allowed: 5, now: NOW })).toEqual(
      ['general-x'],
    );
  });
});
