// A disruption command's check of its replacement waits inside the activity while the replacement is
// pending, reading it every poll, so the workflow pays one timer and one check per wait window rather
// than per poll. It answers as soon as a read says more than Pending, and gives up its wait after a
// bounded number of reads (a test's virtual timer stands in for real sleeps).
import { beforeEach, describe, expect, test } from 'vitest';
import {
  checkCommandReplacement,
  replacementSpecs,
  REPLACEMENT_READS_PER_CHECK,
  type ReplacementStep,
} from '../../../shared/lifecycle/disruption/executor.js';
import type { ExecutorInput } from '../../../shared/lifecycle/disruption/command-workflow.js';
import type { DisruptionCommand } from '../../../shared/lifecycle/disruption/methods/method.js';
import type { ActivityTimer } from '../../../shared/lifecycle/durable/activity-wait.js';
import type { NodeClaim, NodePool } from '../../../shared/models/karpenter.js';
import { fakeLifecycle, type FakeLifecycle } from '../../support/fake-lifecycle.js';
import { nodePool } from '../../support/fixtures.js';
import { initializedNodeClaim } from '../../support/method-pass.js';

const pool: NodePool = {
  ...nodePool('general', 'default', { budgets: [{ nodes: '3' }] }),
  metadata: { name: 'general', uid: 'pool-uid' },
};
const command: DisruptionCommand = {
  method: 'drift',
  reason: 'Drifted',
  nodePool: { name: 'general', uid: 'pool-uid' },
  candidates: [{ name: 'general-old', uid: 'uid-general-old' }],
  replacements: [{}],
  detail: 'drifted',
  decidedAt: '2026-12-06T10:00:00Z',
  validateAfterSeconds: 0,
  attempt: 0,
  consolidationType: '',
};
const input: ExecutorInput = { command, pollSeconds: 5, timeoutMinutes: 30 };
const step: ReplacementStep = { input, index: 0 };
const replacementName = replacementSpecs(command)[0]!.name;

/** A timer that only counts, and runs `onSleep` after each sleep (the cluster moving meanwhile). */
function countingTimer(onSleep: (sleeps: number) => void = () => undefined) {
  const slept: number[] = [];
  const timer: ActivityTimer = {
    sleep: async (ms) => {
      slept.push(ms);
      onSleep(slept.length);
    },
    elapsedMs: () => slept.reduce((sum, ms) => sum + ms, 0),
  };
  return { timer, slept };
}

describe('checkCommandReplacement', () => {
  let fake: FakeLifecycle;
  /** Launched, its Node not yet initialized. */
  const pending = (): NodeClaim => {
    const claim = initializedNodeClaim(replacementName, pool);
    return {
      ...claim,
      status: {
        ...claim.status,
        conditions: [
          {
            type: 'Launched',
            status: 'True',
            reason: 'Launched',
            message: '',
            lastTransitionTime: '2026-12-06T10:00:10Z',
          },
        ],
      },
    };
  };
  beforeEach(() => {
    fake = fakeLifecycle();
    fake.nodePools.seed(pool);
    fake.nodeClaims.seed(pending());
  });

  test('waits on a pending replacement and answers on the read that finds it Initialized', async () => {
    const { timer, slept } = countingTimer((sleeps) => {
      if (sleeps === 3) {
        const current = fake.nodeClaims.peek(replacementName)!;
        fake.nodeClaims.seed({ ...initializedNodeClaim(replacementName, pool), metadata: current.metadata });
      }
    });
    await expect(checkCommandReplacement(fake.deps, step, timer)).resolves.toEqual({ status: 'Initialized' });
    expect(slept).toEqual([5_000, 5_000, 5_000]);
  });

  test('answers Pending after its reads are spent, within the activity wait window', async () => {
    const { timer, slept } = countingTimer();
    await expect(checkCommandReplacement(fake.deps, step, timer)).resolves.toEqual({ status: 'Pending' });
    expect(slept).toHaveLength(REPLACEMENT_READS_PER_CHECK - 1);
    expect(timer.elapsedMs()).toBeLessThanOrEqual(45_000);
  });

  test('answers at once when the replacement is gone', async () => {
    await fake.nodeClaims.delete(replacementName);
    const { timer, slept } = countingTimer();
    await expect(checkCommandReplacement(fake.deps, step, timer)).resolves.toMatchObject({
      status: 'Failed',
    });
    expect(slept).toEqual([]);
  });
});
