// A command's begin step, against in-memory fakes: it marks and taints its candidates only if the budget,
// read again at that moment, still allows them. Another writer (the sweep, a freed slot's run, another
// workflow) may have marked a node of the NodePool since the command was decided and validated.
import { beforeEach, describe, expect, test } from 'vitest';
import { findCondition } from '../../../shared/decisions/conditions.js';
import { beginCommand, type ExecutorInput } from '../../../shared/lifecycle/disruption/executor.js';
import { ConditionTypes, type NodeClaim, type NodePool } from '../../../shared/models/karpenter.js';
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
});
