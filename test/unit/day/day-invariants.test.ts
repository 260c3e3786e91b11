// The day's invariant checkers on small hand-made histories: each passes on one that keeps it and fails
// on one that breaks it, so a green day means something.
import { describe, expect, it } from 'vitest';
import { checkBudgets } from '../../../local/scenarios/day/invariants/budgets.js';
import { checkChurn } from '../../../local/scenarios/day/invariants/churn.js';
import { checkDestinations } from '../../../local/scenarios/day/invariants/destinations.js';
import { checkDoNotDisrupt } from '../../../local/scenarios/day/invariants/do-not-disrupt.js';
import { checkEndState } from '../../../local/scenarios/day/invariants/end-state.js';
import type {
  ArmRequest,
  DayHistory,
  InvariantResult,
  PdbStatusVersion,
} from '../../../local/scenarios/day/invariants/history.js';
import { checkDay, type CheckOptions } from '../../../local/scenarios/day/invariants/index.js';
import { checkPdbs, desiredHealthy } from '../../../local/scenarios/day/invariants/pdbs.js';
import { checkPending, percentile } from '../../../local/scenarios/day/invariants/pending.js';
import {
  checkArmRates,
  checkKubernetesRates,
  counterGrowth,
  counterRates,
  parseApiServerMetrics,
  peakInWindow,
} from '../../../local/scenarios/day/invariants/request-rates.js';
import { checkVmPuts } from '../../../local/scenarios/day/invariants/vm-puts.js';
import { vmNameFor } from '../../../shared/cloudprovider/azure/decisions/vm-spec.js';
import type { NodeClaim } from '../../../shared/models/index.js';
import { claim, history, node, pod, running } from './day-history-fixtures.js';

const initialized = (at: number, name: string, nodeName = `node-${name}`) =>
  claim(at, name, { initialized: true, nodeName });

describe('budgets never exceeded, per reason', () => {
  const fourNodes = ['a', 'b', 'c', 'd'].map((n) => initialized(0, n));
  const budgets = [{ at: 0, pool: 'general', budgets: [{ nodes: '2', reasons: ['Drifted' as const] }] }];

  it('holds when each mark leaves the count within the budget', () => {
    const h = history({
      poolBudgets: budgets,
      nodeClaims: [
        ...fourNodes,
        claim(10, 'a', { initialized: true, nodeName: 'node-a', reason: 'Drifted' }),
        claim(11, 'b', { initialized: true, nodeName: 'node-b', reason: 'Drifted' }),
        claim(20, 'a', {}, 'DELETED'),
        claim(21, 'c', { initialized: true, nodeName: 'node-c', reason: 'Drifted' }),
      ],
    });
    const outcome = checkBudgets(h, 0, 0);
    expect(outcome.holds).toBe(true);
    expect(outcome.detail).toContain('general Drifted: at most 2');
  });

  /** a, b and c marked Drifted at 10, 11 and 12 under a budget of 2: c is one too many. */
  const threeMarks = () =>
    history({
      poolBudgets: budgets,
      nodeClaims: [
        ...fourNodes,
        claim(10, 'a', { initialized: true, nodeName: 'node-a', reason: 'Drifted' }),
        claim(11, 'b', { initialized: true, nodeName: 'node-b', reason: 'Drifted' }),
        claim(12, 'c', { initialized: true, nodeName: 'node-c', reason: 'Drifted' }),
      ],
    });

  it('fails when a third node is marked under a budget of 2', () => {
    const outcome = checkBudgets(threeMarks(), 0, 0);
    expect(outcome.holds).toBe(false);
    expect(outcome.violations[0]).toContain('c marked Drifted while 2 of 4');
  });

  /** The day's budget check as the day runs it at its end, with `at` the teardown's start. */
  const budgetsAtTheEnd = (h: DayHistory, at: number): InvariantResult => {
    const options: CheckOptions = {
      slackMs: 0,
      pendingBoundMs: 60_000,
      stuckMs: 60_000,
      churn: { noticeMs: 5_000, memoryMs: () => 600_000 },
      at,
      final: true,
    };
    const found = checkDay(h, options).invariants.find((i) => i.name.startsWith('disruption budgets'));
    if (!found) throw new Error('checkDay ran no budget check');
    return found;
  };

  it('does not judge marks from the teardown on (the user spends the budget), but counts them', () => {
    const h = threeMarks();
    expect(budgetsAtTheEnd(h, 13).holds).toBe(false);
    const fromTeardown = budgetsAtTheEnd(h, 12);
    expect(fromTeardown.holds).toBe(true);
    expect(fromTeardown.detail).toContain('2 marks checked (1 during the teardown not judged)');
  });

  it('judges, through checkDay, a mark before the end time and not one after it', () => {
    const h = threeMarks();
    const fourMarks = history({
      ...h,
      nodeClaims: [
        ...h.nodeClaims,
        claim(14, 'd', { initialized: true, nodeName: 'node-d', reason: 'Drifted' }),
      ],
    });
    const outcome = budgetsAtTheEnd(fourMarks, 13);
    expect(outcome.holds).toBe(false);
    expect(outcome.violations).toHaveLength(1);
    expect(outcome.violations[0]).toContain('c marked Drifted while 2 of 4');
    expect(outcome.detail).toContain('3 marks checked (1 during the teardown not judged)');
  });

  it('counts a node tainted karpenter.sh/disrupted, and judges each reason by its own budget', () => {
    const h = history({
      poolBudgets: [
        {
          at: 0,
          pool: 'general',
          budgets: [
            { nodes: '1', reasons: ['Empty'] },
            { nodes: '3', reasons: ['Drifted'] },
          ],
        },
      ],
      nodeClaims: [
        ...fourNodes,
        claim(10, 'b', { initialized: true, nodeName: 'node-b', reason: 'Drifted' }),
        claim(12, 'c', { initialized: true, nodeName: 'node-c', reason: 'Empty' }),
      ],
      nodes: [node(5, 'node-a', true)],
    });
    const outcome = checkBudgets(h, 0, 0);
    expect(outcome.holds).toBe(false);
    expect(outcome.violations).toHaveLength(1);
    expect(outcome.violations[0]).toContain('c marked Empty');
  });

  it('judges a scheduled budget by the mark’s time, with the slack for a sweep that decided earlier', () => {
    // Drifted blocked except from 00:01 to 00:02 UTC on the day of the epoch.
    const window = [
      { nodes: '0', reasons: ['Drifted' as const], schedule: '2 0 * * *', duration: '23h59m' },
      { nodes: '2', reasons: ['Drifted' as const] },
    ];
    const marks = (at: number) =>
      history({
        poolBudgets: [{ at: 0, pool: 'general', budgets: window }],
        nodeClaims: [
          ...fourNodes,
          claim(at, 'a', { initialized: true, nodeName: 'node-a', reason: 'Drifted' }),
        ],
      });
    expect(checkBudgets(marks(90_000), 0, 0).holds).toBe(true);
    expect(checkBudgets(marks(150_000), 0, 0).holds).toBe(false);
    expect(checkBudgets(marks(121_000), 5_000, 0).holds).toBe(true);
  });

  it('budgets node repair’s Unhealthy marks, but not a spot eviction notice’s', () => {
    const oneAtATime = [{ at: 0, pool: 'general', budgets: [{ nodes: '1' }] }];
    const unhealthy = (at: number, name: string, policy: string) =>
      claim(at, name, {
        initialized: true,
        nodeName: `node-${name}`,
        reason: 'Unhealthy',
        message: `${policy.split(':')[0] ?? ''} past its toleration (repair policy ${policy})`,
      });
    const twoRepairs = history({
      poolBudgets: oneAtATime,
      nodeClaims: [
        ...fourNodes,
        unhealthy(10, 'a', 'Ready=Unknown:1458ms:reboot'),
        unhealthy(11, 'b', 'Ready=Unknown:1458ms:reboot'),
      ],
    });
    const repairs = checkBudgets(twoRepairs, 0, 0);
    expect(repairs.holds).toBe(false);
    expect(repairs.violations[0]).toContain('b marked Unhealthy while 1 of 4');
    // Two preemptions and a repair: the notices are not paced, the repair has the budget to itself.
    const preemptions = history({
      poolBudgets: oneAtATime,
      nodeClaims: [
        ...fourNodes,
        unhealthy(10, 'a', 'PreemptionScheduled=True:0s:preempted'),
        unhealthy(11, 'b', 'PreemptionScheduled=True:0s:preempted'),
        claim(12, 'a', {}, 'DELETED'),
        claim(13, 'b', {}, 'DELETED'),
        unhealthy(14, 'c', 'Ready=Unknown:1458ms:reboot'),
      ],
    });
    const outcome = checkBudgets(preemptions, 0, 0);
    expect(outcome.holds).toBe(true);
    expect(outcome.detail).toContain('general Unhealthy: at most 1');
  });
});

describe('no churn loop', () => {
  const options = { noticeMs: 5_000, memoryMs: () => 600_000, origin: 0 };
  const replacement = (
    at: number,
    name: string,
    launchedFalse?: string,
    type: 'ADDED' | 'MODIFIED' | 'DELETED' = 'MODIFIED',
  ) => claim(at, name, { replacementOf: 'old', ...(launchedFalse ? { launchedFalse } : {}) }, type);

  it('holds when a failed replacement is followed by a different one', () => {
    const h = history({
      nodeClaims: [
        replacement(0, 'r1', undefined, 'ADDED'),
        replacement(5, 'r1', 'ZonalAllocationFailure'),
        claim(
          20,
          'r2',
          {
            replacementOf: 'old',
            requirements: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['2'] }],
          },
          'ADDED',
        ),
        claim(25, 'r2', {
          replacementOf: 'old',
          launchedFalse: 'ZonalAllocationFailure',
          requirements: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['2'] }],
        }),
      ],
    });
    expect(checkChurn(h, options).holds).toBe(true);
  });

  it('fails when the same replacement fails the same way again with nothing changed', () => {
    const h = history({
      nodeClaims: [
        replacement(0, 'r1', undefined, 'ADDED'),
        replacement(5, 'r1', 'InsufficientCapacity'),
        replacement(20, 'r2', undefined, 'ADDED'),
        replacement(25, 'r2', 'InsufficientCapacity'),
      ],
    });
    const outcome = checkChurn(h, options);
    expect(outcome.holds).toBe(false);
    expect(outcome.violations[0]).toContain('the replacement of old was issued again');
  });

  it('fails when consolidation issues a failed replacement again, identical, whatever the second one does', () => {
    const marked = claim(0, 'old', { initialized: true, nodeName: 'node-old', reason: 'Underutilized' });
    const again = (secondOutcome: 'Initialized' | 'drift') =>
      history({
        nodeClaims: [
          secondOutcome === 'drift'
            ? claim(0, 'old', { initialized: true, nodeName: 'node-old', reason: 'Drifted' })
            : marked,
          replacement(1, 'r1', undefined, 'ADDED'),
          replacement(5, 'r1', 'InsufficientCapacity'),
          replacement(6, 'r1', undefined, 'DELETED'),
          replacement(20, 'r2', undefined, 'ADDED'),
          claim(30, 'r2', { replacementOf: 'old', initialized: true }),
        ],
      });
    const consolidation = checkChurn(again('Initialized'), options);
    expect(consolidation.holds).toBe(false);
    expect(consolidation.violations[0]).toContain('issued again with the same requirements by consolidation');
    // Drift's retry after a failure is judged by its outcome: it launched elsewhere, no loop.
    expect(checkChurn(again('drift'), options).holds).toBe(true);
  });

  it('holds when the NodePool changed between the two', () => {
    const h = history({
      poolChanges: [{ at: 10, pool: 'general' }],
      nodeClaims: [
        replacement(0, 'r1', undefined, 'ADDED'),
        replacement(5, 'r1', 'InsufficientCapacity'),
        replacement(20, 'r2', undefined, 'ADDED'),
        replacement(25, 'r2', 'InsufficientCapacity'),
      ],
    });
    expect(checkChurn(h, options).holds).toBe(true);
  });

  const put = (at: number, vmName: string, zone: string, status = 201): ArmRequest => ({
    at,
    method: 'PUT',
    kind: 'putVm',
    vmName,
    status,
    errorCode: undefined,
    throttled: false,
    placement: { vmSize: 'Standard_D2as_v5', zone, priority: 'Regular' },
  });

  it('fails when a VM is PUT at a placement whose creation failed, once the app knew', () => {
    const failed = history({
      armRequests: [put(0, 'vm-1', '1'), put(10_000, 'vm-2', '1')],
      vmFailures: [{ at: 2_000, vmName: 'vm-1', code: 'ZonalAllocationFailed' }],
    });
    expect(checkChurn(failed, options).holds).toBe(false);
    const elsewhere = history({
      armRequests: [put(0, 'vm-1', '1'), put(10_000, 'vm-2', '2'), put(3_000, 'vm-3', '1')],
      vmFailures: [{ at: 2_000, vmName: 'vm-1', code: 'ZonalAllocationFailed' }],
    });
    expect(checkChurn(elsewhere, options).holds).toBe(true);
  });

  it('holds when a quota-refused placement is PUT again after a VM of that quota was deleted', () => {
    const refused = { ...put(2_000, 'vm-2', '1', 409), errorCode: 'OperationNotAllowed' };
    const deleted: ArmRequest = { ...put(12_000, 'vm-1', '1', 200), method: 'DELETE', kind: 'deleteVm' };
    const freed = history({ armRequests: [put(0, 'vm-1', '1'), refused, deleted, put(20_000, 'vm-3', '1')] });
    expect(checkChurn(freed, options).holds).toBe(true);
    // Without the delete the same PUT is a re-issue within the quota's memory.
    const held = history({ armRequests: [put(0, 'vm-1', '1'), refused, put(20_000, 'vm-3', '1')] });
    expect(checkChurn(held, options).holds).toBe(false);
  });
});

describe('no node consolidated within consolidateAfter of becoming a destination', () => {
  const marked = (at: number, name: string, reason: string, deleting = false) =>
    claim(at, name, { initialized: true, nodeName: `node-${name}`, reason, deleting });

  it('holds when the mark comes consolidateAfter after the last pod arrived', () => {
    const h = history({
      pods: [running(1_000, 'p', 'web', 'node-a')],
      nodeClaims: [
        initialized(0, 'a'),
        marked(12_000, 'a', 'Underutilized'),
        marked(13_000, 'a', 'Underutilized', true),
      ],
    });
    expect(checkDestinations(h, 0, 0).holds).toBe(true);
  });

  it('fails when a node that just received a pod is consolidated', () => {
    const h = history({
      pods: [running(8_000, 'p', 'web', 'node-a')],
      nodes: [node(12_100, 'node-a', true)],
      nodeClaims: [initialized(0, 'a'), marked(12_000, 'a', 'Empty'), marked(12_500, 'a', 'Empty', true)],
    });
    const outcome = checkDestinations(h, 0, 0);
    expect(outcome.holds).toBe(false);
    expect(outcome.violations[0]).toContain('4.0 s after a pod arrived');
  });

  it('fails when a pod arrived between the mark and the taint and the node still went', () => {
    const h = history({
      pods: [running(12_050, 'p', 'web', 'node-a')],
      nodes: [node(14_000, 'node-a', true)],
      nodeClaims: [initialized(0, 'a'), marked(12_000, 'a', 'Empty'), marked(14_500, 'a', 'Empty', true)],
    });
    expect(checkDestinations(h, 0, 0).holds).toBe(false);
  });

  it('does not judge a mark put back before anything was deleted', () => {
    const h = history({
      pods: [running(11_900, 'p', 'web', 'node-a')],
      nodeClaims: [initialized(0, 'a'), marked(12_000, 'a', 'Empty'), initialized(12_100, 'a')],
    });
    expect(checkDestinations(h, 0, 0).holds).toBe(true);
  });

  it('does not count a pod the scheduler bound once the node was tainted (within the watches’ skew)', () => {
    const h = history({
      pods: [running(12_000 + 200 - 500, 'p', 'web', 'node-a')],
      nodes: [node(12_200, 'node-a', true)],
      nodeClaims: [initialized(0, 'a'), marked(12_000, 'a', 'Empty'), marked(12_400, 'a', 'Empty', true)],
    });
    expect(checkDestinations(h, 0, 0).holds).toBe(true);
  });

  it('does not count DaemonSet pods or drift', () => {
    const h = history({
      pods: [running(8_000, 'ds', 'agent', 'node-a'), running(9_000, 'p', 'web', 'node-b')],
      nodeClaims: [
        initialized(0, 'a'),
        initialized(0, 'b'),
        marked(12_000, 'a', 'Empty', true),
        marked(12_000, 'b', 'Drifted', true),
      ],
    });
    expect(checkDestinations(h, 0, 0).holds).toBe(true);
  });
});

describe('no do-not-disrupt pod’s node consolidated', () => {
  const marked = (at: number, reason: string) =>
    history({
      doNotDisruptSets: ['pinned'],
      pods: [
        running(0, 'p', 'pinned', 'node-a'),
        pod(5_000, 'p', 'pinned', { nodeName: 'node-a' }, 'DELETED'),
      ],
      nodeClaims: [initialized(1, 'a'), claim(at, 'a', { initialized: true, nodeName: 'node-a', reason })],
    });
  it('fails when a node with a do-not-disrupt pod is consolidated, and holds once the pod left', () => {
    expect(checkDoNotDisrupt(marked(3_000, 'Underutilized'), 0).holds).toBe(false);
    expect(checkDoNotDisrupt(marked(6_000, 'Underutilized'), 0).holds).toBe(true);
  });
  it('counts a drift mark of such a node in the figure without failing (drift does not read pods yet)', () => {
    const outcome = checkDoNotDisrupt(marked(3_000, 'Drifted'), 0);
    expect(outcome.holds).toBe(true);
    expect(outcome.detail).toContain('1 of them marked Drifted anyway');
  });
  it('does not judge node repair, which ignores do-not-disrupt as upstream’s does', () => {
    const outcome = checkDoNotDisrupt(marked(3_000, 'Unhealthy'), 0);
    expect(outcome.holds).toBe(true);
    expect(outcome.detail).toContain('1 repaired');
    expect(checkDoNotDisrupt(marked(3_000, 'Empty'), 0).holds).toBe(false);
  });
});

describe('pending → Running within the bound', () => {
  it('measures percentiles, skips pods deleted while pending, and fails a pod that waited too long', () => {
    const pods = [
      pod(0, 'a', 'web'),
      running(2_000, 'a', 'web', 'n'),
      pod(0, 'b', 'web'),
      running(4_000, 'b', 'web', 'n'),
      pod(0, 'gone', 'web'),
      pod(5_000, 'gone', 'web', {}, 'DELETED'),
      pod(0, 'ds', 'agent', { nodeName: 'n' }),
    ];
    const ok = checkPending(history({ pods }), 10_000, 200_000);
    expect(ok.invariant.holds).toBe(true);
    expect(ok.figures).toMatchObject({ count: 2, p50Ms: 2_000, p99Ms: 4_000, withdrawn: 1 });
    const withdrawnLate = checkPending(
      history({ pods: [...pods, pod(0, 'w', 'web'), pod(50_000, 'w', 'web', {}, 'DELETED')] }),
      10_000,
      200_000,
    );
    expect(withdrawnLate.invariant.violations[0]).toContain('w deleted, never Running, after 50.0 s');
    const late = checkPending(history({ pods: [...pods, pod(0, 'stuck', 'web')] }), 10_000, 30_000);
    expect(late.invariant.holds).toBe(false);
    expect(late.invariant.violations[0]).toContain('stuck still pending after 30.0 s');
  });

  it('adds an outage the pod waited through to its bound', () => {
    const pods = [pod(0, 'a', 'web'), running(70_000, 'a', 'web', 'n')];
    expect(checkPending(history({ pods }), 20_000, 80_000).invariant.holds).toBe(false);
    const outage = [{ from: 5_000, to: 65_000, what: 'API server down' }];
    expect(checkPending(history({ pods, disturbances: outage }), 20_000, 80_000).invariant.holds).toBe(true);
  });

  it('counts the wait of a pod bound to a node whose kubelet died from when the node went NotReady', () => {
    const readyAs = (at: number, status: string) => {
      const version = node(at, 'dead');
      version.object.status = { conditions: [{ type: 'Ready', status }] } as never;
      return version;
    };
    // Bound at 10 s to a node whose kubelet stopped at 5 s; NotReady at 55 s; evicted by repair at 70 s.
    const pods = [
      pod(10_000, 'swallowed', 'web', { nodeName: 'dead' }),
      pod(70_000, 'swallowed', 'web', { nodeName: 'dead', deleting: true }),
      pod(70_000, 'again', 'web'),
      running(80_000, 'again', 'web', 'other'),
    ];
    const nodes = [readyAs(0, 'True'), readyAs(55_000, 'Unknown')];
    const judged = checkPending(
      history({ pods, nodes, brokenNodes: [{ node: 'dead', at: 5_000 }] }),
      20_000,
      100_000,
    );
    expect(judged.invariant.holds).toBe(true);
    expect(judged.invariant.detail).toContain('1 bound to a node whose kubelet died');
    // Without the weather's record the same pod waited 60 s for nothing the app could see.
    expect(checkPending(history({ pods, nodes }), 20_000, 100_000).invariant.holds).toBe(false);
    // A node that is not seen NotReady excuses its pods' wait (the end state judges whether it settled).
    const never = checkPending(
      history({ pods, nodes: [readyAs(0, 'True')], brokenNodes: [{ node: 'dead', at: 5_000 }] }),
      20_000,
      100_000,
    );
    expect(never.invariant.holds).toBe(true);
  });

  it('takes percentiles by rank', () => {
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 50)).toBe(5);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 99)).toBe(10);
  });
});

describe('one successful VM PUT per NodeClaim', () => {
  const request = (method: string, vmName: string, status: number): ArmRequest => ({
    at: 0,
    method,
    kind: method === 'PUT' ? 'putVm' : 'deleteVm',
    vmName,
    status,
    errorCode: undefined,
    throttled: false,
  });
  it('holds through 412s and a relaunch after a delete; fails on a second creating PUT', () => {
    expect(
      checkVmPuts(
        history({
          armRequests: [
            request('PUT', 'v', 201),
            request('PUT', 'v', 412),
            request('DELETE', 'v', 202),
            request('PUT', 'v', 201),
          ],
        }),
      ).holds,
    ).toBe(true);
    expect(
      checkVmPuts(history({ armRequests: [request('PUT', 'v', 201), request('PUT', 'v', 201)] })).holds,
    ).toBe(false);
  });
});

describe('the end state', () => {
  const end = (parts: { vms?: string[]; nodes?: string[] }, claims = [initialized(0, 'a').object]) => ({
    at: 1_000_000,
    vms: (parts.vms ?? [vmNameFor('a')]).map((name) => ({ name, provisioningState: 'Succeeded' })),
    nodeClaims: claims,
    nodes: (parts.nodes ?? ['node-a']).map((name) => node(0, name).object),
    firstSeen: { a: 0, b: 0 },
  });
  it('holds when every VM and Node has its NodeClaim and the teardown left nothing', () => {
    const h = history({ end: end({}), teardown: { vms: 0, nodes: 0, nodeClaims: 0 } });
    expect(checkEndState(h, 60_000).holds).toBe(true);
  });
  it('finds a leaked VM, an orphan Node, a stuck NodeClaim and leftovers after the teardown', () => {
    const stuck = claim(0, 'b', {}).object;
    const h = history({
      end: end({ vms: [vmNameFor('a'), 'aks-leaked'], nodes: ['node-a', 'node-orphan'] }, [
        initialized(0, 'a').object,
        stuck,
      ]),
      teardown: { vms: 1, nodes: 0, nodeClaims: 0 },
    });
    const outcome = checkEndState(h, 60_000);
    expect(outcome.holds).toBe(false);
    expect(outcome.violations.join('\n')).toMatch(
      /aks-leaked[\s\S]*node-orphan[\s\S]*b not Initialized[\s\S]*1 VMs/,
    );
  });
});

describe('the end state, around an outage', () => {
  it('gives a NodeClaim deleting or launching through an outage the outage on top of the bound', () => {
    const deleting = {
      ...initialized(0, 'a').object,
      metadata: {
        ...initialized(0, 'a').object.metadata,
        deletionTimestamp: new Date(900_000).toISOString(),
      },
    };
    const at = 1_000_000;
    const endOf = (claims: NodeClaim[]) => ({
      at,
      vms: [{ name: vmNameFor('a'), provisioningState: 'Succeeded' }],
      nodeClaims: claims,
      nodes: [node(0, 'node-a').object],
      firstSeen: { a: 0 },
    });
    const teardown = { vms: 0, nodes: 0, nodeClaims: 0 };
    // Deleting for 100 s against a bound of 60 s: stuck, unless 40 s or more of it was an outage.
    expect(checkEndState(history({ end: endOf([deleting]), teardown }), 60_000).holds).toBe(false);
    const outage = { from: 920_000, to: 970_000, what: 'API server down' };
    expect(
      checkEndState(history({ end: endOf([deleting]), teardown, disturbances: [outage] }), 60_000).holds,
    ).toBe(true);
    // An outage before the deletion does not count.
    const before = { from: 800_000, to: 890_000, what: 'API server down' };
    expect(
      checkEndState(history({ end: endOf([deleting]), teardown, disturbances: [before] }), 60_000).holds,
    ).toBe(false);
  });
});

describe('request rates', () => {
  it('counts the busiest minute and fails above Compute’s limit or on the buckets’ 429s', () => {
    const puts = (count: number, throttled = 0): ArmRequest[] =>
      Array.from({ length: count }, (_, i) => ({
        at: i * 10,
        method: 'PUT',
        kind: 'putVm',
        vmName: `v${i}`,
        status: i < throttled ? 429 : 201,
        errorCode: undefined,
        throttled: i < throttled,
      }));
    expect(checkArmRates(history({ armRequests: puts(400) })).holds).toBe(true);
    expect(checkArmRates(history({ armRequests: puts(501) })).holds).toBe(false);
    expect(checkArmRates(history({ armRequests: puts(10, 3), injectedThrottles: 3 })).holds).toBe(true);
    expect(checkArmRates(history({ armRequests: puts(10, 3), injectedThrottles: 1 })).holds).toBe(false);
    expect(peakInWindow([0, 10, 59_999, 60_000, 60_001], 60_000)).toBe(4);
  });

  it('reads the API server’s metrics, survives its restart, and fails on rejected requests', () => {
    const text = [
      '# HELP apiserver_request_total x',
      'apiserver_request_total{code="200",verb="GET"} 100',
      'apiserver_request_total{code="201",verb="POST"} 20',
      'apiserver_current_inflight_requests{request_kind="mutating"} 3',
      'apiserver_current_inflight_requests{request_kind="readOnly"} 7',
      'apiserver_flowcontrol_rejected_requests_total{flow_schema="global-default",priority_level="global-default",reason="queue-full"} 0',
      'apiserver_flowcontrol_dispatched_requests_total{flow_schema="global-default",priority_level="global-default"} 40',
      'apiserver_flowcontrol_dispatched_requests_total{flow_schema="system-nodes",priority_level="system"} 60',
    ].join('\n');
    const sample = parseApiServerMetrics(text, 0);
    expect(sample).toEqual({
      at: 0,
      requestsTotal: 120,
      rejectedTotal: 0,
      appDispatchedTotal: 40,
      appRejectedTotal: 0,
      inflightReadOnly: 7,
      inflightMutating: 3,
    });
    expect(counterGrowth([10, 50, 5, 20])).toBe(60);
    // 40 over the first second, a restart to 5 (counted from 0) and 15 more over the next two: 60 in 3 s.
    const counted = [0, 1_000, 2_000, 3_000].map((at, i) => ({ at, n: [10, 50, 5, 20][i] as number }));
    expect(counterRates(counted, (c) => c.n)).toEqual({ mean: 20, peak: 40 });
    const samples = [sample, { ...sample, at: 60_000, requestsTotal: 720 }];
    const ok = checkKubernetesRates(samples);
    expect(ok.holds).toBe(true);
    expect(ok.detail).toContain('peak 600 requests/min');
    // Another client's rejections are reported, not judged: the app's own flow is what the app answers for.
    const othersRejected = checkKubernetesRates([...samples, { ...sample, at: 70_000, rejectedTotal: 2 }]);
    expect(othersRejected.holds).toBe(true);
    expect(othersRejected.detail).toContain(
      "0 of the app's 0 requests rejected (0.00%), 2 of every client's",
    );
    // The app's: within 1% of its requests it backs off as asked; beyond, it does not.
    const appSample = (at: number, dispatched: number, rejected: number) => ({
      ...sample,
      at,
      appDispatchedTotal: dispatched,
      appRejectedTotal: rejected,
      rejectedTotal: rejected,
    });
    expect(checkKubernetesRates([appSample(0, 0, 0), appSample(60_000, 1_000, 10)]).holds).toBe(true);
    const impolite = checkKubernetesRates([appSample(0, 0, 0), appSample(60_000, 1_000, 11)]);
    expect(impolite.holds).toBe(false);
    expect(impolite.violations[0]).toContain("rejected 11 of the app's 1011 requests");
    // In flight is judged in all against the server's concurrency (600), not per kind: under priority and
    // fairness 254 mutating requests are within it.
    const busy = { ...sample, at: 60_000, inflightMutating: 254, inflightReadOnly: 30 };
    expect(checkKubernetesRates([sample, busy]).holds).toBe(true);
    expect(checkKubernetesRates([sample, { ...busy, inflightReadOnly: 400 }]).holds).toBe(false);
  });
});

describe('no PodDisruptionBudget breached', () => {
  const base = [running(0, 'w1', 'web', 'n1'), running(0, 'w2', 'web', 'n2'), running(0, 'w3', 'web', 'n2')];
  const rules = { pdbs: [{ set: 'web', maxUnavailable: 1 }], replicas: [{ at: 0, set: 'web', replicas: 3 }] };
  /** A status version of web's PDB (desiredHealthy 2 of 3). */
  const status = (at: number, allowed: number, healthy: number, disrupted: string[]): PdbStatusVersion => ({
    at,
    set: 'web',
    generation: 1,
    observedGeneration: 1,
    currentHealthy: healthy,
    desiredHealthy: 2,
    disruptionsAllowed: allowed,
    expectedPods: 3,
    disruptedPods: disrupted,
  });

  it('holds when one pod of three is evicted under maxUnavailable 1, fails on the second', () => {
    const one = history({
      ...rules,
      nodes: [node(5, 'n2', true)],
      pods: [...base, pod(10, 'w2', 'web', { nodeName: 'n2', phase: 'Running', ready: true, evicted: true })],
    });
    expect(checkPdbs(one, 0).holds).toBe(true);
    const two = history({
      ...rules,
      nodes: [node(5, 'n2', true)],
      pods: [
        ...base,
        pod(10, 'w2', 'web', { nodeName: 'n2', phase: 'Running', ready: true, evicted: true }),
        pod(11, 'w3', 'web', { nodeName: 'n2', phase: 'Running', ready: true, evicted: true }),
      ],
    });
    const outcome = checkPdbs(two, 0);
    expect(outcome.holds).toBe(false);
    expect(checkPdbs(two, 0, 10).holds).toBe(true);
    expect(outcome.violations[0]).toContain('w3 evicted leaving 1 healthy web pods, PDB wants 2');
  });

  it('does not judge the eviction of a pod not Ready before it, when the version kept before was Ready (an outage)', () => {
    // The recorder last saw w2 and w3 Ready (before the API server went away); both were evicted after it
    // came back, by then marked not Ready by the controller-manager 20 s before their evictions.
    const evictedAt = 100_000;
    const blind = (name: string, notReadySince: number) =>
      pod(evictedAt, name, 'web', {
        nodeName: 'n2',
        phase: 'Running',
        notReadySince,
        evicted: true,
        graceSeconds: 30,
      });
    const h = history({
      ...rules,
      nodes: [node(5, 'n2', true)],
      pods: [...base, blind('w2', evictedAt - 20_000), blind('w3', evictedAt - 20_000)],
    });
    const outcome = checkPdbs(h, 0);
    expect(outcome.holds).toBe(true);
    expect(outcome.detail).toContain('2 more of pods already not Ready when evicted (not judged)');
    // Not Ready only as the eviction began (the kubelet stopping it): judged, and the second breaches.
    const stopping = history({
      ...rules,
      nodes: [node(5, 'n2', true)],
      pods: [...base, blind('w2', evictedAt), blind('w3', evictedAt + 500)],
    });
    expect(checkPdbs(stopping, 0).violations[0]).toContain('w3 evicted leaving 1 healthy web pods');
  });

  it('wants Kubernetes’ desiredHealthy: minAvailable absolute, replicas less maxUnavailable never below 0', () => {
    expect(desiredHealthy({ set: 'web', minAvailable: 5 }, 6)).toBe(5);
    expect(desiredHealthy({ set: 'web', minAvailable: 5 }, 2)).toBe(5);
    expect(desiredHealthy({ set: 'web', maxUnavailable: 2 }, 6)).toBe(4);
    expect(desiredHealthy({ set: 'web', maxUnavailable: 2 }, 1)).toBe(0);
    // A set scaled to 1 under maxUnavailable 2: its last pod's eviction breaches nothing.
    const h = history({
      pdbs: [{ set: 'web', maxUnavailable: 2 }],
      replicas: [{ at: 0, set: 'web', replicas: 1 }],
      nodes: [node(5, 'n1', true)],
      pods: [
        running(0, 'w1', 'web', 'n1'),
        pod(10, 'w1', 'web', { nodeName: 'n1', phase: 'Running', ready: true, evicted: true }),
      ],
    });
    expect(checkPdbs(h, 0).holds).toBe(true);
  });

  it('says beside a breach what the PDB status said just before and which pods of the set existed then', () => {
    const h = history({
      ...rules,
      // The status had not yet counted w2's eviction when w3's was judged (Kubernetes' race).
      pdbStatuses: [status(1, 1, 3, []), status(12, 0, 2, ['w3'])],
      nodes: [node(5, 'n2', true)],
      pods: [
        ...base,
        pod(10, 'w2', 'web', { nodeName: 'n2', phase: 'Running', ready: true, evicted: true }),
        pod(11, 'w3', 'web', { nodeName: 'n2', phase: 'Running', ready: true, evicted: true }),
      ],
    });
    const outcome = checkPdbs(h, 0);
    expect(outcome.holds).toBe(false);
    const violation = outcome.violations[0] ?? '';
    expect(violation).toContain('w3 evicted leaving 1 healthy web pods, PDB wants 2');
    expect(violation).toContain(
      'PDB status then (0.0 s before): disruptionsAllowed 1, currentHealthy 3, desiredHealthy 2, expectedPods 3, observedGeneration 1 of 1, disruptedPods []',
    );
    expect(violation).toContain('counted by: disruptionsAllowed 0, currentHealthy 2');
    expect(violation).toContain(
      'pods then: w1 Running Ready, w2 Running Ready terminating, w3 Running Ready',
    );
    // Without any status seen, it says so rather than guess.
    const blind = checkPdbs(history({ ...h, pdbStatuses: [] }), 0).violations[0] ?? '';
    expect(blind).toContain('no PDB status seen before it; no status named it among disruptedPods');
  });

  it('does not judge an eviction the PDB status allowed before it had counted a scale-down’s deletion', () => {
    const four = [...base, running(0, 'w4', 'web', 'n1')];
    // Scaled from 4 to 3 (desired 2): the ReplicaSet deletes w4 on an untainted node; 20 s later, past
    // the scale-down slack, w3 is evicted from the drained n2 on a status that still counted w4 healthy.
    const raced = (statuses: PdbStatusVersion[]) =>
      history({
        pdbs: rules.pdbs,
        replicas: [
          { at: 0, set: 'web', replicas: 4 },
          { at: 9, set: 'web', replicas: 3 },
        ],
        pdbStatuses: statuses,
        nodes: [node(5, 'n2', true)],
        pods: [
          ...four,
          pod(10, 'w4', 'web', { nodeName: 'n1', phase: 'Running', ready: true, deleting: true }),
          pod(10, 'w2', 'web', { nodeName: 'n2', phase: 'Running', ready: true, evicted: true }),
          pod(30_000, 'w3', 'web', { nodeName: 'n2', phase: 'Running', ready: true, evicted: true }),
        ],
      });
    const lagged = checkPdbs(raced([status(29_000, 1, 3, [])]), 0);
    expect(lagged.holds).toBe(true);
    expect(lagged.detail).toContain('1 allowed by a PDB status that had not yet counted a scale-down');
    // A status that allowed nothing: the eviction is judged, and fails.
    expect(checkPdbs(raced([status(29_000, 0, 2, [])]), 0).holds).toBe(false);
  });

  it('does not judge an eviction the PDB status allowed before it had counted a scale-up', () => {
    // Scaled from 3 to 4 (desired 3) just before w3 is evicted; the status still counted 3 pods (desired 2)
    // and allowed one disruption, which by its own count left enough.
    const scaledUp = (expectedPods: number) =>
      history({
        pdbs: rules.pdbs,
        replicas: [
          { at: 0, set: 'web', replicas: 3 },
          { at: 9, set: 'web', replicas: 4 },
        ],
        pdbStatuses: [{ ...status(8, 1, 3, []), expectedPods }],
        nodes: [node(5, 'n2', true)],
        pods: [
          ...base,
          pod(10, 'w3', 'web', { nodeName: 'n2', phase: 'Running', ready: true, evicted: true }),
        ],
      });
    const lagged = checkPdbs(scaledUp(3), 0);
    expect(lagged.holds).toBe(true);
    expect(lagged.detail).toContain('1 allowed by a PDB status that had not yet counted a scale-up');
    // A status that had counted the scale-up and still allowed it: judged, and a breach.
    expect(checkPdbs(scaledUp(4), 0).holds).toBe(false);
  });

  it('does not take deletions without the Eviction API’s mark for evictions, however late after a scale-down', () => {
    // After an API server outage the ReplicaSet controller deletes a scale-down's pods a minute late, from
    // a drained node: no DisruptionTarget condition, so not an eviction.
    const h = history({
      pdbs: rules.pdbs,
      replicas: [...rules.replicas, { at: 9, set: 'web', replicas: 1 }],
      nodes: [node(5, 'n2', true)],
      pods: [
        ...base,
        pod(60_000, 'w2', 'web', { nodeName: 'n2', phase: 'Running', ready: true, deleting: true }),
        pod(60_001, 'w3', 'web', { nodeName: 'n2', phase: 'Running', ready: true, deleting: true }),
      ],
    });
    const outcome = checkPdbs(h, 0);
    expect(outcome.holds).toBe(true);
    expect(outcome.detail).toBe('no eviction of a PDB-protected pod');
    // The same two pods evicted: the second breaches.
    const evicted = history({
      ...h,
      pods: [
        ...base,
        pod(60_000, 'w2', 'web', { nodeName: 'n2', phase: 'Running', ready: true, evicted: true }),
        pod(60_001, 'w3', 'web', { nodeName: 'n2', phase: 'Running', ready: true, evicted: true }),
      ],
      replicas: rules.replicas,
    });
    expect(checkPdbs(evicted, 0).holds).toBe(false);
  });
});
