// Node repair's pure decisions, table-tested against upstream's node health suite
// (pkg/controllers/node/health/suite_test.go: matching type and status, the toleration, the earliest
// policy, the 20% breaker per NodePool with its rounding) and the Azure provider's policies, plus this
// app's additions: reason-aware matching, the Unhealthy budget, preemptions outside the breaker, and the
// reboot escalation.
import { describe, expect, it } from 'vitest';
import type { BudgetNode } from '../../shared/decisions/budgets.js';
import { allowedDisruptions } from '../../shared/decisions/budgets.js';
import {
  breakerMessage,
  breakerVerdict,
  unhealthyThreshold,
} from '../../shared/decisions/node-repair/breaker.js';
import { selectRepairs, type RepairCandidateInput } from '../../shared/decisions/node-repair/candidates.js';
import {
  afterReboot,
  firstStep,
  rebootsLeft,
  rebootsLeftInRepair,
} from '../../shared/decisions/node-repair/escalation.js';
import {
  AZURE_REPAIR_POLICIES,
  conditionMetricLabel,
  describeMatch,
  formatRepairPolicy,
  isUnhealthy,
  parseRepairPolicies,
  unhealthyMatch,
  type RepairPolicy,
} from '../../shared/decisions/node-repair/policies.js';
import type { NodePool } from '../../shared/models/karpenter.js';
import type { Node, NodeCondition } from '../../shared/models/kube.js';

const t0 = new Date('2026-12-02T00:00:00Z');
const minutes = (n: number) => new Date(t0.getTime() + n * 60_000);
const badNode: RepairPolicy = {
  conditionType: 'BadNode',
  conditionStatus: 'False',
  tolerationMs: 30 * 60_000,
  action: 'replace',
};

function node(name: string, conditions: NodeCondition[] = []): Node {
  return {
    metadata: { name, uid: `uid-${name}` },
    spec: {},
    status: {
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: t0.toISOString() }, ...conditions],
    },
  };
}
const cond = (type: string, status: NodeCondition['status'], at = t0, reason?: string): NodeCondition => ({
  type,
  status,
  lastTransitionTime: at.toISOString(),
  ...(reason ? { reason } : {}),
});

describe('policies: upstream suite cases', () => {
  it('a matching condition past its toleration is repairable', () => {
    const match = unhealthyMatch(node('a', [cond('BadNode', 'False')]), [badNode], minutes(60));
    expect(match?.repairableAt).toEqual(minutes(30));
  });
  it('a condition of another type does not match', () => {
    expect(
      unhealthyMatch(node('a', [cond('FakeHealthyNode', 'False')]), [badNode], minutes(60)),
    ).toBeUndefined();
  });
  it('a condition of another status does not match', () => {
    expect(unhealthyMatch(node('a', [cond('BadNode', 'True')]), [badNode], minutes(60))).toBeUndefined();
  });
  it('the toleration counts from lastTransitionTime: 20 minutes into 30 is not yet repairable', () => {
    const match = unhealthyMatch(node('a', [cond('BadNode', 'False')]), [badNode], minutes(20));
    expect(match && match.repairableAt > minutes(20)).toBe(true);
  });
  it('of several matching policies, the one whose toleration ends first', () => {
    const policies: RepairPolicy[] = [
      { ...badNode, tolerationMs: 60 * 60_000 },
      {
        conditionType: 'ValidUnhealthyCondition',
        conditionStatus: 'False',
        tolerationMs: 30 * 60_000,
        action: 'replace',
      },
    ];
    const match = unhealthyMatch(
      node('a', [cond('ValidUnhealthyCondition', 'False'), cond('BadNode', 'False')]),
      policies,
      minutes(27),
    );
    expect(match?.policy.conditionType).toBe('ValidUnhealthyCondition');
    expect(match?.repairableAt).toEqual(minutes(30));
  });
  it("the Azure provider's policies: Ready False/Unknown 10 min, NodeHealthy and PreemptionScheduled at once", () => {
    expect(AZURE_REPAIR_POLICIES.map(formatRepairPolicy)).toEqual([
      'Ready=False:10m:reboot',
      'Ready=Unknown:10m:reboot',
      'kubernetes.azure.com/NodeHealthy=False:0s:reboot',
      'PreemptionScheduled=True:0s:preempted',
    ]);
    const unknown = node('a');
    unknown.status = { conditions: [cond('Ready', 'Unknown', t0, 'NodeStatusUnknown')] };
    expect(unhealthyMatch(unknown, AZURE_REPAIR_POLICIES, minutes(9))?.repairableAt).toEqual(minutes(10));
    const preempted = unhealthyMatch(
      node('b', [cond('PreemptionScheduled', 'True')]),
      AZURE_REPAIR_POLICIES,
      t0,
    );
    expect(preempted?.policy.action).toBe('preempted');
    expect(preempted?.repairableAt).toEqual(t0);
  });
  it('reason-aware: a policy naming a reason matches only that reason', () => {
    const [policy] = (parseRepairPolicies('Ready=False/KubeletNotReady:0s') as { policies: RepairPolicy[] })
      .policies;
    const policies = [policy as RepairPolicy];
    const notReady = node('a');
    notReady.status = { conditions: [cond('Ready', 'False', t0, 'KubeletNotReady')] };
    const other = node('b');
    other.status = { conditions: [cond('Ready', 'False', t0, 'SomethingElse')] };
    expect(isUnhealthy(notReady, policies)).toBe(true);
    expect(isUnhealthy(other, policies)).toBe(false);
  });
  it('formats and parses back, and says which policy matched', () => {
    for (const policy of AZURE_REPAIR_POLICIES) {
      expect(parseRepairPolicies(formatRepairPolicy(policy))).toEqual({ policies: [policy] });
    }
    const match = unhealthyMatch(
      node('a', [cond('kubernetes.azure.com/NodeHealthy', 'False')]),
      AZURE_REPAIR_POLICIES,
      t0,
    );
    expect(match && describeMatch(match)).toBe(
      'kubernetes.azure.com/NodeHealthy=False past its 0s toleration (repair policy kubernetes.azure.com/NodeHealthy=False:0s:reboot)',
    );
  });
  it("labels the metric's condition as upstream's pretty.ToSnakeCase does", () => {
    expect(conditionMetricLabel('Ready')).toBe('ready');
    expect(conditionMetricLabel('BadNode')).toBe('bad_node');
    expect(conditionMetricLabel('PreemptionScheduled')).toBe('preemption_scheduled');
    expect(conditionMetricLabel('kubernetes.azure.com/NodeHealthy')).toBe(
      'kubernetes.azure.com/_node_healthy',
    );
  });
});

describe('the 20% breaker, as upstream rounds it', () => {
  it.each([
    [10, 2],
    [8, 2],
    [5, 1],
    [3, 1],
    [1, 1],
    [0, 0],
  ])('%i nodes may have %i unhealthy', (total, threshold) => {
    expect(unhealthyThreshold(total)).toBe(threshold);
  });
  it('3 of 10 unhealthy stops repair; 1 of 3 does not (round up)', () => {
    const ten = Array.from({ length: 10 }, (_, i) => node(`n${i}`, i < 3 ? [cond('BadNode', 'False')] : []));
    expect(breakerVerdict(ten, [badNode])).toEqual({ healthy: false, unhealthy: 3, total: 10, threshold: 2 });
    const three = Array.from({ length: 3 }, (_, i) => node(`n${i}`, i < 1 ? [cond('BadNode', 'False')] : []));
    expect(breakerVerdict(three, [badNode]).healthy).toBe(true);
  });
  it("counts unhealthy nodes whether or not their toleration has passed, and says upstream's words", () => {
    const eight = Array.from({ length: 8 }, (_, i) => {
      const n = node(`n${i}`);
      if (i < 3) n.status = { conditions: [cond('Ready', 'Unknown', minutes(-1))] };
      return n;
    });
    expect(breakerVerdict(eight, AZURE_REPAIR_POLICIES).healthy).toBe(false);
    expect(breakerMessage('nodepool')).toBe('more than 20% nodes are unhealthy in the nodepool');
    expect(breakerMessage('cluster')).toBe('more then 20% nodes are unhealthy in the cluster');
  });
});

describe('which repairs start', () => {
  const pool: NodePool = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'pool', uid: 'pool-uid' },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'c' },
          requirements: [],
        },
      },
    },
  } as NodePool;
  const select = (inputs: RepairCandidateInput[], nodePool = pool) =>
    selectRepairs({
      nodeClaims: inputs,
      breakerNodes: inputs.flatMap((i) => (i.node ? [i.node] : [])),
      policies: AZURE_REPAIR_POLICIES,
      allowed: (budgetNodes: BudgetNode[]) =>
        allowedDisruptions(nodePool, 'Unhealthy', budgetNodes, minutes(60)).allowed,
      now: minutes(60),
    });
  const healthy = (i: number): RepairCandidateInput => ({
    name: `n${i}`,
    node: node(`n${i}`),
    initialized: true,
    disrupting: false,
  });
  const unhealthy = (i: number, c: NodeCondition): RepairCandidateInput => {
    const n = node(`n${i}`);
    n.status = { conditions: [c] };
    return { name: `n${i}`, node: n, initialized: true, disrupting: false };
  };

  it('one NotReady node of ten is repaired under the default 10% budget (NotReady alone does not use it up)', () => {
    const inputs = [
      unhealthy(0, cond('Ready', 'Unknown')),
      ...Array.from({ length: 9 }, (_, i) => healthy(i + 1)),
    ];
    expect(select(inputs).start.map((s) => s.name)).toEqual(['n0']);
  });
  it('the budget paces repair: two unhealthy of ten, 10% allows one, the longest-unhealthy first', () => {
    const inputs = [
      unhealthy(0, cond('kubernetes.azure.com/NodeHealthy', 'False', minutes(5))),
      unhealthy(1, cond('kubernetes.azure.com/NodeHealthy', 'False', minutes(2))),
      ...Array.from({ length: 8 }, (_, i) => healthy(i + 2)),
    ];
    expect(select(inputs).start.map((s) => s.name)).toEqual(['n1']);
  });
  it('a node already being disrupted counts against the budget and is not chosen again', () => {
    const inputs = [
      { ...unhealthy(0, cond('Ready', 'False')), disrupting: true },
      unhealthy(1, cond('Ready', 'False')),
      ...Array.from({ length: 8 }, (_, i) => healthy(i + 2)),
    ];
    expect(select(inputs).start).toEqual([]);
  });
  it('the breaker holds paced repairs (3 of 8) and lists them blocked; a preemption still starts', () => {
    const inputs = [
      unhealthy(0, cond('Ready', 'Unknown')),
      unhealthy(1, cond('kubernetes.azure.com/NodeHealthy', 'False')),
      unhealthy(2, cond('PreemptionScheduled', 'True', minutes(59))),
      ...Array.from({ length: 5 }, (_, i) => healthy(i + 3)),
    ];
    const selection = select(inputs);
    expect(selection.start.map((s) => s.name)).toEqual(['n2']);
    // NodeHealthy's toleration (0 s) ended before Ready=Unknown's (10 min).
    expect(selection.blocked.map((s) => s.name)).toEqual(['n1', 'n0']);
  });
  it('a budget of "0" holds repair', () => {
    const zero = { ...pool, spec: { ...pool.spec, disruption: { budgets: [{ nodes: '0' }] } } } as NodePool;
    const inputs = [
      unhealthy(0, cond('Ready', 'Unknown')),
      ...Array.from({ length: 9 }, (_, i) => healthy(i + 1)),
    ];
    expect(select(inputs, zero).start).toEqual([]);
  });
});

describe('reboot before replace', () => {
  const settings = { maxReboots: 1, recoveryMs: 5 * 60_000 };
  it('a policy that allows a reboot reboots first; replace and preempted do not', () => {
    expect(firstStep('reboot', { rebootsTried: 0 }, settings, t0)).toBe('reboot');
    expect(firstStep('replace', { rebootsTried: 0 }, settings, t0)).toBe('replace');
    expect(firstStep('preempted', { rebootsTried: 0 }, settings, t0)).toBe('preempted');
    expect(firstStep('reboot', { rebootsTried: 0 }, { ...settings, maxReboots: 0 }, t0)).toBe('replace');
  });
  it('a node rebooted recently is replaced, not rebooted in a loop; an old reboot no longer counts', () => {
    const recent = { rebootsTried: 1, lastRebootAt: minutes(-3).toISOString() };
    expect(firstStep('reboot', recent, settings, t0)).toBe('replace');
    const old = { rebootsTried: 1, lastRebootAt: minutes(-60).toISOString() };
    expect(rebootsLeft(old, settings, t0)).toBe(1);
  });
  it('after a reboot: recovered when cleared, waiting within the bound, escalate after it', () => {
    expect(afterReboot(true, t0, minutes(1), settings)).toBe('recovered');
    expect(afterReboot(false, t0, minutes(4), settings)).toBe('waiting');
    expect(afterReboot(false, t0, minutes(5), settings)).toBe('escalate');
  });
  it("a repair's own reboots count however late it decides (a host down past twice the bound)", () => {
    // Rebooted at t0, decided 15 minutes later: by rebootsLeft that reboot is outside the window and
    // another would be allowed; within the repair it still counts.
    const afterOwnReboot = { rebootsTried: 1, lastRebootAt: t0.toISOString() };
    expect(rebootsLeft(afterOwnReboot, settings, minutes(15))).toBe(1);
    expect(rebootsLeftInRepair({ rebootsTried: 0 }, 1, settings, t0)).toBe(0);
    expect(rebootsLeftInRepair({ rebootsTried: 0 }, 1, { ...settings, maxReboots: 2 }, t0)).toBe(1);
    // Reboots of an earlier repair within the window are used up when this one begins.
    const earlier = { rebootsTried: 1, lastRebootAt: minutes(-3).toISOString() };
    expect(rebootsLeftInRepair(earlier, 0, { ...settings, maxReboots: 2 }, t0)).toBe(1);
  });
});
