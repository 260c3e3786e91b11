// Differential test of disruption budgets and their cron schedules against upstream Karpenter's own code
// (test/oracle/budgets: sigs.k8s.io/karpenter's NodePool.GetAllowedDisruptionsByReason with robfig/cron
// v3, built from its Go module). Thousands of seeded random cases plus the known edge cases; prints the
// case count and every divergence, and fails on any divergence not listed as deliberate.
import { beforeAll, expect, test } from 'vitest';
import { allowedDisruptions, type BudgetNode } from '../../shared/decisions/budgets.js';
import type { Budget, DisruptionReason, NodePool } from '../../shared/models/karpenter.js';
import { ensureBudgetOracle, runBudgetOracle, type OracleCase } from '../oracle/budgets/oracle.js';

const SEED = Number(process.env.BUDGET_PARITY_SEED ?? 20261130);
const RANDOM_CASES = Number(process.env.BUDGET_PARITY_CASES ?? 5000);
const reasons: DisruptionReason[] = ['Drifted', 'Underutilized', 'Empty'];

let oracle: string;
beforeAll(async () => {
  oracle = await ensureBudgetOracle();
}, 900_000);

/** mulberry32: small, seeded, good enough to spread cases. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function generate(count: number, seed: number): OracleCase[] {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const field = (lo: number, hi: number, names: readonly string[] = []): string => {
    const n = () => (names.length > 0 && next() < 0.2 ? pick(names) : String(int(lo, hi)));
    switch (int(0, 7)) {
      case 0:
        return '*';
      case 1:
        return `*/${int(1, hi)}`;
      case 2:
        return `${int(lo, hi)}-${int(lo, hi)}`;
      case 3:
        return `${int(lo, hi)}-${int(lo, hi)}/${int(1, 5)}`;
      case 4:
        return `${n()},${n()}`;
      case 5:
        return '?';
      default:
        return n();
    }
  };
  const schedule = (): string => {
    if (next() < 0.15)
      return pick(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);
    return [
      field(0, 59),
      field(0, 23),
      field(1, 31),
      field(1, 12, ['JAN', 'feb', 'Dec']),
      field(0, 6, ['MON', 'sun', 'Sat']),
    ].join(' ');
  };
  const duration = () =>
    pick(['1h', '30m', '10m', '1h30m', '2h', '24h', '168h', '15m', '90s', '0s', '1m', '720h', '5h']);
  const nodes = () =>
    pick(['0', '1', '2', '3', '5', '10', '100', '0%', '1%', '10%', '25%', '33%', '50%', '99%', '100%']);
  const budget = (): Budget => {
    const b: Budget = { nodes: nodes() };
    if (next() < 0.45) {
      b.schedule = schedule();
      b.duration = duration();
    }
    if (next() < 0.35) b.reasons = reasons.filter(() => next() < 0.5);
    return b;
  };
  const start = Date.parse('2024-01-01T00:00:00Z');
  const span = Date.parse('2031-01-01T00:00:00Z') - start;
  return Array.from({ length: count }, () => {
    const budgets = next() < 0.05 ? undefined : Array.from({ length: int(1, 4) }, budget);
    return {
      ...(budgets ? { budgets } : {}),
      reason: pick(reasons),
      numNodes: pick([0, 1, 2, 3, 5, 7, 10, 13, 20, 50, 100, 1000]),
      // Whole minutes mostly (schedules fire on minutes), sometimes any second.
      now: new Date(
        start + Math.floor((next() * span) / 60_000) * 60_000 + (next() < 0.2 ? int(0, 59) * 1000 : 0),
      ).toISOString(),
    };
  });
}

/** Ten Drifted nodes at `now` under one budget of zero nodes that holds for `duration` after each `schedule`. */
function zeroBudgetDuring(schedule: string, duration: string, now: string): OracleCase {
  return { budgets: [{ nodes: '0', schedule, duration }], reason: 'Drifted', numNodes: 10, now };
}

/** The issue's cases, each reaching a cluster one way or another. */
const knownCases: OracleCase[] = [
  // An invalid schedule in a budget for another reason.
  {
    budgets: [{ nodes: '5' }, { nodes: '1', schedule: 'not a cron', duration: '1h', reasons: ['Empty'] }],
    reason: 'Drifted',
    numNodes: 10,
    now: '2026-06-01T12:00:00Z',
  },
  // Day of week 7 and 5-7.
  zeroBudgetDuring('0 0 * * 7', '24h', '2026-11-29T12:00:00Z'),
  zeroBudgetDuring('0 0 * * 5-7', '24h', '2026-11-29T12:00:00Z'),
  // Schedules that never fire within five years.
  zeroBudgetDuring('0 0 30 2 *', '1h', '2026-06-01T12:00:00Z'),
  zeroBudgetDuring('0 0 29 2 *', '1h', '2097-06-01T12:00:00Z'),
  // Accepted by robfig/cron's parser.
  zeroBudgetDuring('*-5 * * * *', '1h', '2026-06-01T12:00:00Z'),
  zeroBudgetDuring('0,,30 * * * *', '10m', '2026-06-01T12:05:00Z'),
  zeroBudgetDuring('+30 * * * *', '10m', '2026-06-01T12:35:00Z'),
  // Empty lists.
  { budgets: [], reason: 'Drifted', numNodes: 10, now: '2026-06-01T12:00:00Z' },
  { budgets: [{ nodes: '0', reasons: [] }], reason: 'Drifted', numNodes: 10, now: '2026-06-01T12:00:00Z' },
  // Node counts above int32.
  { budgets: [{ nodes: '3000000000' }], reason: 'Drifted', numNodes: 10, now: '2026-06-01T12:00:00Z' },
  // Macros.
  zeroBudgetDuring('@DAILY', '1h', '2026-06-01T00:30:00Z'),
  zeroBudgetDuring('@every 1h', '1h', '2026-06-01T00:30:00Z'),
];

function ours(c: OracleCase): number {
  const nodePool = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'parity' },
    spec: { ...(c.budgets ? { disruption: { budgets: c.budgets } } : {}), template: { spec: {} } },
  } as unknown as NodePool;
  const nodes: BudgetNode[] = Array.from({ length: c.numNodes }, (_, i) => ({
    name: `n${i}`,
    initialized: true,
    managed: true,
    disrupting: false,
  }));
  return allowedDisruptions(nodePool, c.reason as DisruptionReason, nodes, new Date(c.now)).allowed;
}

test('disruption budgets and schedules match upstream Karpenter on generated and known cases', async () => {
  const cases = [...knownCases, ...generate(RANDOM_CASES, SEED)];
  // The API server stores a NodePool without budgets with the CRD's default, which is what upstream reads.
  const upstreamInput = cases.map((c) => (c.budgets ? c : { ...c, budgets: [{ nodes: '10%' }] }));
  const upstream = await runBudgetOracle(oracle, upstreamInput);
  const divergences: string[] = [];
  cases.forEach((c, i) => {
    const theirs = upstream[i];
    if (!theirs) throw new Error(`no oracle result for case ${i}`);
    // Upstream returns MaxInt32 when no budget bounds the reason; nothing can disrupt more than the pool.
    const expected = Math.min(theirs.error ? 0 : theirs.allowed, c.numNodes);
    const actual = ours(c);
    if (Math.max(0, expected) !== actual) {
      divergences.push(
        `${JSON.stringify(c)} → upstream ${theirs.allowed}${theirs.error ? ` (${theirs.error})` : ''}, ours ${actual}`,
      );
    }
  });
  console.log(
    `budget parity: ${cases.length} cases (${knownCases.length} known, ${RANDOM_CASES} generated, seed ${SEED}); ${divergences.length} divergences${divergences.length ? ':\n  ' + divergences.join('\n  ') : ''}`,
  );
  expect(divergences).toEqual([]);
}, 900_000);
