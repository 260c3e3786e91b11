// The disruption pass's record as a user reads it: one decision per candidate and method (the latest
// note wins), bounded with the chosen and the blocked kept first, commands with their $/h before and
// after; the per-cause counts the gauge and the NodePool's status publish; and the causes the
// consolidation search's answers and the drift selection's holds are classified into.
import { describe, expect, it } from 'vitest';
import {
  MAX_RECORD_SUBJECTS,
  type CandidateDecision,
} from '../../shared/decisions/explain/decision-record.js';
import {
  blockedByCause,
  budgetBlockedMessage,
  commandDecisionOf,
  disruptionRecordOf,
  unconsolidatableCause,
} from '../../shared/decisions/explain/disruption-record.js';
import { replacementHold } from '../../shared/decisions/disruption-candidates.js';
import { describeScore, scoreMove } from '../../shared/decisions/consolidation/balanced.js';
import {
  disruptionBlockedStatus,
  disruptionBlockedUnchanged,
} from '../../shared/decisions/nodepool-status.js';

const at = new Date('2026-03-01T12:00:00Z');

const keep = (
  nodeClaim: string,
  cause: CandidateDecision['cause'],
  method = 'emptiness',
): CandidateDecision => ({
  nodeClaim,
  method,
  decision: 'keep',
  cause,
  message: `${cause} keeps ${nodeClaim}`,
});
const disrupt = (nodeClaim: string, method = 'emptiness'): CandidateDecision => ({
  nodeClaim,
  method,
  decision: 'disrupt',
  cause: 'Disrupted',
  message: 'node is empty',
});

describe('disruptionRecordOf', () => {
  it('keeps the latest note per candidate and method, in first-reported order, with the commands', () => {
    const command = commandDecisionOf({
      method: 'emptiness',
      reason: 'Empty',
      candidates: ['a'],
      replacements: [],
      candidatePrices: [0.096],
      podsMoved: [],
      replaces: false,
    });
    const record = disruptionRecordOf({
      nodePool: 'general',
      at,
      candidates: [keep('a', 'Budget'), keep('b', 'PDB'), disrupt('a'), keep('b', 'PDB', 'drift')],
      commands: [command],
    });
    expect(record).toEqual({
      kind: 'disruption',
      id: 'general-2026-03-01T12:00:00.000Z',
      at: '2026-03-01T12:00:00.000Z',
      nodePool: 'general',
      candidates: [disrupt('a'), keep('b', 'PDB'), keep('b', 'PDB', 'drift')],
      commands: [
        {
          method: 'emptiness',
          reason: 'Empty',
          candidates: ['a'],
          replacements: [],
          pricePerHourBefore: 0.096,
          pricePerHourAfter: 0,
          podsMoved: [],
        },
      ],
    });
    expect(record.omittedCandidates).toBeUndefined();
  });

  it('is bounded to MAX_RECORD_SUBJECTS, keeping the chosen and the blocked before NotApplicable', () => {
    const many = Array.from({ length: MAX_RECORD_SUBJECTS + 10 }, (_, i) =>
      keep(`n-${String(i).padStart(4, '0')}`, 'NotApplicable'),
    );
    const record = disruptionRecordOf({
      nodePool: 'general',
      at,
      candidates: [...many, keep('pdb', 'PDB'), disrupt('chosen')],
      commands: [],
    });
    expect(record.candidates).toHaveLength(MAX_RECORD_SUBJECTS);
    expect(record.omittedCandidates).toBe(12);
    expect(record.candidates.map((c) => c.nodeClaim)).toContain('pdb');
    expect(record.candidates.map((c) => c.nodeClaim)).toContain('chosen');
    // Still in the order reported.
    expect(record.candidates.at(-1)?.nodeClaim).toBe('chosen');
  });
});

describe('commandDecisionOf', () => {
  it('states a replace at its cheapest replacement, a delete at 0, and skips unknown prices', () => {
    const replace = commandDecisionOf({
      method: 'single-node-consolidation',
      reason: 'Underutilized',
      candidates: ['a', 'b'],
      replacements: ['Standard_D2as_v5', 'Standard_D2s_v5'],
      candidatePrices: [0.192, Number.POSITIVE_INFINITY],
      replacementPrice: 0.086,
      podsMoved: ['default/web-1'],
      replaces: true,
    });
    expect(replace).toMatchObject({ pricePerHourBefore: 0.192, pricePerHourAfter: 0.086 });
    // A template replacement whose type is not decided yet is stated like for like.
    const drift = commandDecisionOf({
      method: 'drift',
      reason: 'Drifted',
      candidates: ['a'],
      replacements: ['NodePool general template'],
      candidatePrices: [0.1],
      podsMoved: [],
      replaces: true,
    });
    expect(drift).toMatchObject({ pricePerHourBefore: 0.1, pricePerHourAfter: 0.1 });
  });
});

describe('blockedByCause', () => {
  it('counts each kept node once, under its first cause other than NotApplicable; a chosen node not at all', () => {
    const counts = blockedByCause([
      keep('a', 'DoNotDisrupt'),
      keep('b', 'PDB'),
      keep('c', 'Budget'),
      keep('c', 'NothingCheaper', 'single-node-consolidation'),
      keep('d', 'Budget'),
      disrupt('d', 'single-node-consolidation'),
      keep('e', 'NotApplicable'),
      keep('e', 'Budget', 'drift'),
      keep('f', 'NotApplicable'),
    ]);
    expect(counts).toEqual([
      { cause: 'Budget', count: 2 },
      { cause: 'DoNotDisrupt', count: 1 },
      { cause: 'PDB', count: 1 },
    ]);
  });
});

describe('cause classification', () => {
  const totals = { totalCost: 10, totalDisruptionCost: 10 };
  it.each([
    [`even deleting it: ${describeScore(scoreMove(0.1, 5, totals))}`, 'BalancedScore'],
    [describeScore(scoreMove(0.1, 5, totals)), 'BalancedScore'],
    ['pod default/web-1 would not schedule: no node fits', 'PodsCannotMove'],
    ['pod web-1 would need a node that is not initialized yet', 'PodsCannotMove'],
    ['the pods would need 2 new nodes', 'PodsCannotMove'],
    ['no replacement is cheaper than $0.0960/h', 'NothingCheaper'],
    ['only 3 cheaper spot options (15 needed)', 'NothingCheaper'],
    ['only replacements no cheaper than a candidate of the same type', 'NothingCheaper'],
    ['spot-to-spot consolidation is disabled', 'NothingCheaper'],
    [
      'Consolidation failed validation: the simulation now says delete; not tried again before 2026-03-01T12:05:00Z',
      'CommandBackoff',
    ],
  ] as const)('%s: %s', (why, cause) => {
    expect(unconsolidatableCause(why)).toBe(cause);
  });

  const drifted = {
    name: 'a',
    nodePool: 'general',
    driftedSince: '2026-03-01T10:00:00Z',
    initialized: true,
    disrupting: false,
  };
  it.each([
    [{ ...drifted, initialized: false }, 'NotReady'],
    [{ ...drifted, disrupting: true }, 'NotReady'],
    [{ ...drifted, doNotDisrupt: 'true' }, 'DoNotDisrupt'],
    [
      { ...drifted, podsBlock: 'Pod default/web-1 has "karpenter.sh/do-not-disrupt" annotation' },
      'DoNotDisrupt',
    ],
    [
      {
        ...drifted,
        podsBlock: 'Pdb prevents pod evictions (PodDisruptionBudget=default/web, Pod=default/web-1)',
      },
      'PDB',
    ],
    [{ ...drifted, backoffUntil: '2026-03-01T12:05:00Z' }, 'CommandBackoff'],
  ] as const)('a drifted node held: %o is %s', (candidate, cause) => {
    expect(replacementHold(candidate, at)?.cause).toBe(cause);
  });
  it('a drifted node nothing holds is eligible', () => {
    expect(replacementHold(drifted, at)).toBeUndefined();
  });

  it('says the budget as the NodePool event does', () => {
    expect(budgetBlockedMessage('Empty')).toBe(
      'No allowed disruptions for disruption reason Empty due to blocking budget',
    );
  });
});

describe('status.disruptionBlocked', () => {
  it('lists causes that kept a node, sorted by cause, and reads absent as empty', () => {
    const desired = disruptionBlockedStatus([
      { cause: 'PDB', count: 1 },
      { cause: 'Budget', count: 2 },
      { cause: 'DoNotDisrupt', count: 0 },
    ]);
    expect(desired).toEqual([
      { cause: 'Budget', count: 2 },
      { cause: 'PDB', count: 1 },
    ]);
    expect(disruptionBlockedUnchanged(undefined, [])).toBe(true);
    expect(disruptionBlockedUnchanged(desired, desired.slice())).toBe(true);
    expect(disruptionBlockedUnchanged([{ cause: 'Budget', count: 1 }], desired)).toBe(false);
  });
});
