import { describe, expect, it } from 'vitest';
import {
  allowedDisruptions,
  formatBudgetErrors,
  validateBudgets,
  type BudgetNode,
} from '../../shared/decisions/budgets.js';
import type { Budget, DisruptionReason, NodePool } from '../../shared/models/index.js';

function pool(budgets?: Budget[]): NodePool {
  return {
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
      ...(budgets !== undefined ? { disruption: { budgets } } : {}),
    },
  };
}

/** `ready` healthy managed initialized nodes, then `disrupting` more that are already being disrupted. */
function fleet(ready: number, disrupting = 0, extra: BudgetNode[] = []): BudgetNode[] {
  const nodes: BudgetNode[] = [];
  for (let i = 0; i < ready; i++)
    nodes.push({ name: `n${i}`, managed: true, initialized: true, disrupting: false });
  for (let i = 0; i < disrupting; i++)
    nodes.push({ name: `d${i}`, managed: true, initialized: true, disrupting: true });
  return [...nodes, ...extra];
}

// Monday 2025-03-10, 12:00 UTC unless a case says otherwise.
const NOON = new Date('2025-03-10T12:00:00Z');

interface Case {
  name: string;
  budgets?: Budget[];
  nodes: BudgetNode[];
  reason?: DisruptionReason;
  now?: string;
  allowed: number;
  total?: number;
  disrupting?: number;
  limitingBudget?: number;
  errorFields?: string[];
}

const cases: Case[] = [
  // Counts and percentages.
  { name: 'count', budgets: [{ nodes: '5' }], nodes: fleet(10), allowed: 5, total: 10, limitingBudget: 0 },
  {
    name: 'count larger than the pool is capped at the pool',
    budgets: [{ nodes: '50' }],
    nodes: fleet(3),
    allowed: 3,
  },
  { name: 'zero count', budgets: [{ nodes: '0' }], nodes: fleet(10), allowed: 0, limitingBudget: 0 },
  { name: '"0%"', budgets: [{ nodes: '0%' }], nodes: fleet(10), allowed: 0 },
  { name: '100%', budgets: [{ nodes: '100%' }], nodes: fleet(7), allowed: 7, limitingBudget: 0 },
  { name: '10% of 3 rounds up to 1', budgets: [{ nodes: '10%' }], nodes: fleet(3), allowed: 1 },
  { name: '10% of 1 rounds up to 1', budgets: [{ nodes: '10%' }], nodes: fleet(1), allowed: 1 },
  { name: '10% of 0 is 0', budgets: [{ nodes: '10%' }], nodes: fleet(0), allowed: 0, total: 0 },
  { name: '10% of 10 is exactly 1', budgets: [{ nodes: '10%' }], nodes: fleet(10), allowed: 1 },
  { name: '10% of 11 rounds up to 2', budgets: [{ nodes: '10%' }], nodes: fleet(11), allowed: 2 },
  { name: '33% of 10 rounds up to 4', budgets: [{ nodes: '33%' }], nodes: fleet(10), allowed: 4 },
  { name: '50% of 5 rounds up to 3', budgets: [{ nodes: '50%' }], nodes: fleet(5), allowed: 3 },

  // Default budget.
  { name: 'no budgets → 10%', nodes: fleet(20), allowed: 2, total: 20 },
  // The CRD's default applies only when budgets are absent; an explicit empty list bounds nothing.
  { name: 'empty budgets list → unbounded', budgets: [], nodes: fleet(3), allowed: 3 },

  // Total counts managed, initialized nodes only; disrupting ones are subtracted.
  {
    name: 'unmanaged and uninitialized nodes are not counted',
    budgets: [{ nodes: '50%' }],
    nodes: fleet(4, 0, [
      { name: 'other-pool', managed: false, initialized: true, disrupting: false },
      { name: 'launching', managed: true, initialized: false, disrupting: false },
      { name: 'launching-notready', managed: true, initialized: false, disrupting: true },
    ]),
    allowed: 2,
    total: 4,
    disrupting: 0,
  },
  {
    name: 'disrupting nodes use up the budget',
    budgets: [{ nodes: '5' }],
    nodes: fleet(7, 3),
    allowed: 2,
    total: 10,
    disrupting: 3,
  },
  {
    name: 'budget exactly used up',
    budgets: [{ nodes: '5' }],
    nodes: fleet(5, 5),
    allowed: 0,
    disrupting: 5,
  },
  {
    name: 'more disrupting than the budget floors at 0',
    budgets: [{ nodes: '2' }],
    nodes: fleet(5, 5),
    allowed: 0,
  },
  {
    name: 'disrupting subtracted from a percentage of the whole total',
    budgets: [{ nodes: '20%' }],
    nodes: fleet(9, 1),
    allowed: 1,
  },

  // Minimum over several budgets.
  {
    name: 'minimum of several budgets',
    budgets: [{ nodes: '50%' }, { nodes: '3' }, { nodes: '40%' }],
    nodes: fleet(10),
    allowed: 3,
    limitingBudget: 1,
  },
  {
    name: 'first of equal budgets is the limiting one',
    budgets: [{ nodes: '50%' }, { nodes: '2' }, { nodes: '20%' }],
    nodes: fleet(10),
    allowed: 2,
    limitingBudget: 1,
  },

  // Reasons.
  {
    name: 'budget for Drifted applies to Drifted',
    budgets: [{ nodes: '1', reasons: ['Drifted'] }],
    nodes: fleet(10),
    allowed: 1,
  },
  {
    name: 'budget for other reasons does not limit Drifted',
    budgets: [{ nodes: '0', reasons: ['Underutilized', 'Empty'] }],
    nodes: fleet(10),
    allowed: 10,
  },
  {
    name: 'budget for other reasons limits those reasons',
    budgets: [{ nodes: '0', reasons: ['Underutilized', 'Empty'] }],
    nodes: fleet(10),
    reason: 'Empty',
    allowed: 0,
  },
  {
    name: 'budget without reasons applies to every reason',
    budgets: [{ nodes: '2' }, { nodes: '5', reasons: ['Drifted'] }],
    nodes: fleet(10),
    reason: 'Underutilized',
    allowed: 2,
    limitingBudget: 0,
  },
  {
    name: 'empty reasons list applies to no reason',
    budgets: [{ nodes: '2', reasons: [] }],
    nodes: fleet(10),
    reason: 'Empty',
    allowed: 10,
  },
  {
    name: 'reason-specific budget tighter than a general one',
    budgets: [{ nodes: '50%' }, { nodes: '1', reasons: ['Drifted'] }],
    nodes: fleet(10),
    allowed: 1,
    limitingBudget: 1,
  },

  // Schedules. NOON is Monday 12:00 UTC.
  {
    name: 'active scheduled budget limits',
    budgets: [{ nodes: '0', schedule: '0 9 * * MON-FRI', duration: '8h' }],
    nodes: fleet(10),
    allowed: 0,
    limitingBudget: 0,
  },
  {
    name: 'inactive scheduled budget is unbounded',
    budgets: [{ nodes: '0', schedule: '0 9 * * MON-FRI', duration: '8h' }],
    nodes: fleet(10),
    now: '2025-03-10T17:00:00Z',
    allowed: 10,
  },
  {
    name: 'inactive scheduled budget leaves the always-active one in force',
    budgets: [{ nodes: '20%' }, { nodes: '0', schedule: '0 9 * * MON-FRI', duration: '8h' }],
    nodes: fleet(10),
    now: '2025-03-08T12:00:00Z', // Saturday
    allowed: 2,
    limitingBudget: 0,
  },
  {
    name: 'scheduled budget straddling midnight, after midnight',
    budgets: [{ nodes: '1', schedule: '0 22 * * *', duration: '4h' }],
    nodes: fleet(10),
    now: '2025-03-11T01:30:00Z',
    allowed: 1,
  },
  {
    name: 'scheduled budget straddling midnight, before it opens',
    budgets: [{ nodes: '1', schedule: '0 22 * * *', duration: '4h' }],
    nodes: fleet(10),
    now: '2025-03-10T21:30:00Z',
    allowed: 10,
  },
  {
    name: 'scheduled budget straddling midnight, after it closes',
    budgets: [{ nodes: '1', schedule: '0 22 * * *', duration: '4h' }],
    nodes: fleet(10),
    now: '2025-03-11T02:00:00Z',
    allowed: 10,
  },
  {
    name: '@daily macro with a duration of hours and minutes',
    budgets: [{ nodes: '0', schedule: '@daily', duration: '1h30m' }],
    nodes: fleet(10),
    now: '2025-03-10T01:29:00Z',
    allowed: 0,
  },
  {
    name: 'scheduled budget straddling a month boundary',
    budgets: [{ nodes: '0', schedule: '0 20 28 2 *', duration: '48h' }],
    nodes: fleet(10),
    now: '2025-03-01T12:00:00Z',
    allowed: 0,
  },
  {
    name: 'scheduled budget for another reason does not apply even while active',
    budgets: [{ nodes: '0', schedule: '@hourly', duration: '59m', reasons: ['Empty'] }],
    nodes: fleet(10),
    allowed: 10,
  },

  // Invalid budgets allow 0 for the reasons they cover and name the field.
  {
    name: 'invalid cron allows 0',
    budgets: [{ nodes: '50%' }, { nodes: '5', schedule: '0 25 * * *', duration: '1h' }],
    nodes: fleet(10),
    allowed: 0,
    limitingBudget: 1,
    errorFields: ['spec.disruption.budgets[1].schedule'],
  },
  {
    name: 'invalid cron in a budget for another reason allows 0 for every reason, as upstream',
    budgets: [{ nodes: '50%' }, { nodes: '5', schedule: 'every day', duration: '1h', reasons: ['Empty'] }],
    nodes: fleet(10),
    allowed: 0,
    errorFields: ['spec.disruption.budgets[1].schedule'],
  },
  {
    name: 'invalid duration allows 0',
    budgets: [{ nodes: '5', schedule: '@daily', duration: 'Never' }],
    nodes: fleet(10),
    allowed: 0,
    errorFields: ['spec.disruption.budgets[0].duration'],
  },
  {
    name: 'schedule without duration allows 0',
    budgets: [{ nodes: '5', schedule: '@daily' }],
    nodes: fleet(10),
    allowed: 0,
    errorFields: ['spec.disruption.budgets[0].duration'],
  },
  {
    name: 'duration without schedule allows 0',
    budgets: [{ nodes: '5', duration: '1h' }],
    nodes: fleet(10),
    allowed: 0,
    errorFields: ['spec.disruption.budgets[0].schedule'],
  },
  ...['150%', '-1', 'five', '', '10 %', '1.5'].map((nodes): Case => ({
    name: `invalid nodes ${JSON.stringify(nodes)} allows 0`,
    budgets: [{ nodes: '100%' }, { nodes }],
    nodes: fleet(10),
    allowed: 0,
    limitingBudget: 1,
    errorFields: ['spec.disruption.budgets[1].nodes'],
  })),
  {
    name: 'unknown reason is reported and matches nothing',
    budgets: [{ nodes: '0', reasons: ['Expired' as DisruptionReason] }, { nodes: '3' }],
    nodes: fleet(10),
    allowed: 3,
    errorFields: ['spec.disruption.budgets[0].reasons[0]'],
  },
];

describe('allowedDisruptions', () => {
  it.each(cases)('$name', (c) => {
    const result = allowedDisruptions(
      pool(c.budgets),
      c.reason ?? 'Drifted',
      c.nodes,
      c.now ? new Date(c.now) : NOON,
    );
    expect(result.allowed).toBe(c.allowed);
    if (c.total !== undefined) expect(result.total).toBe(c.total);
    if (c.disrupting !== undefined) expect(result.disrupting).toBe(c.disrupting);
    if (c.limitingBudget !== undefined) expect(result.limitingBudget).toBe(c.limitingBudget);
    expect(result.errors.map((e) => e.field)).toEqual(c.errorFields ?? []);
    expect(result.usingDefaultBudget).toBe(c.budgets === undefined);
  });

  it('reports no limiting budget when only the default applies', () => {
    const result = allowedDisruptions(pool(), 'Drifted', fleet(10), NOON);
    expect(result).toEqual({ allowed: 1, total: 10, disrupting: 0, usingDefaultBudget: true, errors: [] });
  });

  it('reports no limiting budget when every budget is inactive', () => {
    const result = allowedDisruptions(
      pool([{ nodes: '0', schedule: '@yearly', duration: '1h' }]),
      'Drifted',
      fleet(4, 1),
      NOON,
    );
    expect(result).toEqual({ allowed: 4, total: 5, disrupting: 1, usingDefaultBudget: false, errors: [] });
  });

  it('the reference scenario: 10 drifted nodes, budget "5", allows 5 then 0 while they are in flight', () => {
    const budgets: Budget[] = [{ nodes: '5' }];
    expect(allowedDisruptions(pool(budgets), 'Drifted', fleet(10), NOON).allowed).toBe(5);
    expect(allowedDisruptions(pool(budgets), 'Drifted', fleet(5, 5), NOON).allowed).toBe(0);
    expect(allowedDisruptions(pool(budgets), 'Drifted', fleet(6, 4), NOON).allowed).toBe(1);
  });
});

describe('validateBudgets', () => {
  it('returns nothing for valid budgets and for the default', () => {
    expect(validateBudgets(pool())).toEqual([]);
    expect(
      validateBudgets(
        pool([
          { nodes: '10%' },
          { nodes: '0', schedule: '0 9 * * 1-5', duration: '8h', reasons: ['Drifted', 'Underutilized'] },
          { nodes: '3', schedule: '@weekly', duration: '1h30m0s', reasons: ['Empty'] },
        ]),
      ),
    ).toEqual([]);
  });

  it('names every bad field, with the budget index, in the message', () => {
    const errors = validateBudgets(
      pool([
        { nodes: '10%' },
        { nodes: '101%', schedule: '* * *', duration: '5d' },
        { nodes: '1', schedule: '@daily' },
      ]),
    );
    expect(errors.map((e) => [e.budgetIndex, e.field])).toEqual([
      [1, 'spec.disruption.budgets[1].nodes'],
      [1, 'spec.disruption.budgets[1].schedule'],
      [1, 'spec.disruption.budgets[1].duration'],
      [2, 'spec.disruption.budgets[2].duration'],
    ]);
    expect(errors[1]?.message).toBe(
      'spec.disruption.budgets[1].schedule: invalid cron "* * *": expected 5 fields (minute hour day-of-month month day-of-week), found 3',
    );
    expect(errors[0]?.message).toContain('"101%"');
    expect(errors[2]?.message).toContain('"5d"');
    expect(formatBudgetErrors(errors).split('; ')).toHaveLength(4);
  });
});
