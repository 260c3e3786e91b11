// A command's begin step, against in-memory fakes: it marks and taints its candidates only if the budget,
// read again at that moment, still allows them. Another writer (the sweep, a freed slot's run, another
// workflow) may have marked a node of the NodePool since the command was decided and validated.
import { beforeEach, describe, expect, test } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { findCondition } from '../../../shared/decisions/conditions.js';
import { activePodsDigest } from '../../../shared/decisions/consolidation/pod-events.js';
import { DISRUPTION_MARKS_LEASE } from '../../../shared/lifecycle/disruption/budget-at-mark.js';
import type { ExecutorInput } from '../../../shared/lifecycle/disruption/command-workflow.js';
import { beginCommand } from '../../../shared/lifecycle/disruption/executor.js';
import {
  ConditionTypes,
  WellKnown,
  type NodeClaim,
  type NodePool,
} from '../../../shared/models/karpenter.js';
import { fakeLifecycle, FAKE_NOW, type FakeLifecycle } from '../../support/fake-lifecycle.js';
import { nodePool } from '../../support/fixtures.js';
import { initializedNodeClaim, nodeOf } from '../../support/method-pass.js';

const pool: NodePool = {
  ...nodePool('general', 'default', { budgets: [{ nodes: '1' }], consolidateAfter: '0s' }),
  metadata: { name: 'general', uid: 'pool-uid' },
};

const emptyCommand = (candidate: NodeClaim): ExecutorInput => ({
  command: {
    method: 'emptiness',
    reason: 'Empty',
    nodePool: { name: pool.metadata.name, uid: pool.metadata.uid ?? '' },
    candidates: [{ name: candidate.metadata.name, uid: candidate.metadata.uid ?? '' }],
    replacements: [],
    detail: 'empty',
    decidedAt: FAKE_NOW.toISOString(),
    validateAfterSeconds: 0,
    attempt: 0,
    consolidationType: 'empty',
  },
  pollSeconds: 1,
  timeoutMinutes: 1,
});

const markOf = (nodeClaim: NodeClaim | undefined) =>
  findCondition(nodeClaim?.status?.conditions, ConditionTypes.disruptionReason);

describe('beginCommand', () => {
  let fake: FakeLifecycle;
  beforeEach(() => {
    fake = fakeLifecycle();
    fake.nodePools.seed(pool);
  });

  test('marks and taints its candidate while the budget allows it', async () => {
    const a = fake.nodeClaims.seed(initializedNodeClaim('general-a', pool));
    fake.nodeClaims.seed(initializedNodeClaim('general-b', pool));
    fake.nodes.seed(nodeOf(a));

    expect(await beginCommand(fake.deps, emptyCommand(a))).toBe('ok');
    expect(markOf(fake.nodeClaims.peek('general-a'))?.reason).toBe('Empty');
  });

  test('marks nothing when a node of the NodePool was marked since the command was validated', async () => {
    const a = fake.nodeClaims.seed(initializedNodeClaim('general-a', pool));
    const b = initializedNodeClaim('general-b', pool, {
      conditions: [
        {
          type: ConditionTypes.disruptionReason,
          status: 'True',
          reason: 'Drifted',
          message: 'drifted',
          lastTransitionTime: FAKE_NOW.toISOString(),
        },
      ],
    });
    fake.nodeClaims.seed(b);
    fake.nodes.seed(nodeOf(a));
    fake.nodes.seed(nodeOf(b));

    expect(await beginCommand(fake.deps, emptyCommand(a))).toBe('over-budget');
    expect(markOf(fake.nodeClaims.peek('general-a'))).toBeUndefined();
    expect(fake.nodes.writes).toEqual([]);
  });

  test('two commands begun at once under a budget of 1: the marks Lease lets one mark, the other sees its mark', async () => {
    const a = fake.nodeClaims.seed(initializedNodeClaim('general-a', pool));
    const b = fake.nodeClaims.seed(initializedNodeClaim('general-b', pool));
    fake.nodes.seed(nodeOf(a));
    fake.nodes.seed(nodeOf(b));

    const outcomes = await Promise.all([
      beginCommand(fake.deps, emptyCommand(a)),
      beginCommand(fake.deps, emptyCommand(b)),
    ]);
    expect([...outcomes].sort()).toEqual(['ok', 'over-budget']);
    const marked = ['general-a', 'general-b'].filter((name) => markOf(fake.nodeClaims.peek(name)));
    expect(marked).toHaveLength(1);
    // In one process they asked together: one round took the Lease once for both, read the budget once,
    // and gave the Lease back.
    expect(fake.leases.acquisitionsOf(DISRUPTION_MARKS_LEASE.name)).toHaveLength(1);
    expect(fake.leases.recordOf(DISRUPTION_MARKS_LEASE.name)).toBeUndefined();
  });

  test('marks nothing while another writer holds the marks Lease, and leaves it to them', async () => {
    const a = fake.nodeClaims.seed(initializedNodeClaim('general-a', pool));
    fake.nodes.seed(nodeOf(a));
    fake.leases.holdFor('other-writer', FAKE_NOW, 10, DISRUPTION_MARKS_LEASE.name);

    expect(await beginCommand(fake.deps, emptyCommand(a))).toBe('over-budget');
    expect(markOf(fake.nodeClaims.peek('general-a'))).toBeUndefined();
    expect(fake.leases.recordOf(DISRUPTION_MARKS_LEASE.name)?.holderIdentity).toBe('other-writer');
    expect(fake.leases.acquisitionsOf(DISRUPTION_MARKS_LEASE.name)).toEqual([]);
  });

  describe('a validated candidate, tainted, is compared with its pods listed fresh', () => {
    /** The command as its validation passed it: the candidate's node had no pods then. */
    const validatedEmpty = (candidate: NodeClaim): ExecutorInput => {
      const input = emptyCommand(candidate);
      const [first] = input.command.candidates;
      if (!first) throw new Error('no candidate');
      return {
        ...input,
        command: { ...input.command, candidates: [{ ...first, podsDigest: activePodsDigest([]) }] },
      };
    };
    const podOn = (name: string, nodeName: string, owner?: string): V1Pod => ({
      metadata: {
        name,
        namespace: 'default',
        uid: `uid-${name}`,
        ...(owner
          ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: owner, name: owner, uid: owner }] }
          : {}),
      },
      spec: { nodeName, containers: [] },
      status: { phase: 'Running' },
    });

    test('the same pods as validated (a DaemonSet pod does not count): marked and tainted', async () => {
      const a = fake.nodeClaims.seed(initializedNodeClaim('general-a', pool));
      const node = fake.nodes.seed(nodeOf(a));
      fake.pods.seed(podOn('agent', node.metadata.name, 'DaemonSet'));

      expect(await beginCommand(fake.deps, validatedEmpty(a))).toBe('ok');
      expect(markOf(fake.nodeClaims.peek('general-a'))?.reason).toBe('Empty');
      expect(fake.nodes.peek(node.metadata.name)?.spec.taints?.map((t) => t.key)).toContain(
        WellKnown.disruptedTaintKey,
      );
    });

    test('a pod that landed after the validation: put back unmarked and untainted, the command invalid', async () => {
      const a = fake.nodeClaims.seed(initializedNodeClaim('general-a', pool));
      const node = fake.nodes.seed(nodeOf(a));
      fake.pods.seed(podOn('late', node.metadata.name));

      expect(await beginCommand(fake.deps, validatedEmpty(a))).toEqual({
        invalid: 'general-a: its pods changed since the validation (a pod event)',
      });
      expect(markOf(fake.nodeClaims.peek('general-a'))).toBeUndefined();
      expect(fake.nodes.peek(node.metadata.name)?.spec.taints ?? []).toEqual([]);
      // Tainted before the list, so the pod had no later moment to land in.
      expect(fake.nodes.writes.length).toBeGreaterThanOrEqual(2);
    });
  });
});
