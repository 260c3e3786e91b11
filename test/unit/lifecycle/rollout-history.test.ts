// The rollout workflow's history stays bounded while a rollout waits for hours (a paused NodePool, a
// budget of "0" for Drifted, a long soak): the real orchestration runs on the local host's durable engine
// under a virtual clock, with scripted activities standing in for the cluster. It continues as new within
// its task budget, never begins again after a continuation, polls at its pace throughout, hands every
// activity the input it started with, and ends when a poll says so.
import { describe, expect, test } from 'vitest';
import { HISTORY_EVENTS_PER_TASK } from '../../../shared/lifecycle/durable/history-budget.js';
import {
  ROLLOUT_TASKS_PER_EXECUTION,
  RolloutActivities,
  rolloutOrchestrator,
  type RolloutInput,
  type RolloutStepAnswer,
} from '../../../shared/lifecycle/disruption/rollout/rollout-workflow.js';
import { activity, orchestration } from '../../../shared/runtime/definitions.js';
import { RolloutNames } from '../../../shared/runtime/function-names.js';
import { startVirtualDurableEngine } from '../../support/virtual-durable-engine.js';

const START = new Date('2026-11-30T10:00:00Z');
const HOUR = 3_600_000;
const INSTANCE = 'rollout-pool-uid-0123456789ab';
const input: RolloutInput = {
  nodePool: { name: 'general', uid: 'pool-uid' },
  target: '0123456789ab',
  pollSeconds: 10,
};
/** One poll is two tasks: the budget, one more poll over it, and the execution's own events. */
const HISTORY_BOUND = HISTORY_EVENTS_PER_TASK * (ROLLOUT_TASKS_PER_EXECUTION + 2) + 4;

describe('rollout workflow history during a long wait', () => {
  test('three hours of polls continue as new, begin once, and end when a poll says so', async () => {
    const calls: { name: string; at: number; input: RolloutInput }[] = [];
    let now = (): number => START.getTime();
    const engine = await startVirtualDurableEngine(
      [
        orchestration(RolloutNames.orchestration, rolloutOrchestrator),
        activity<RolloutInput>(RolloutActivities.begin.name, async (step) => {
          calls.push({ name: 'begin', at: now(), input: step });
          return {} satisfies RolloutStepAnswer;
        }),
        activity<RolloutInput>(RolloutActivities.poll.name, async (step) => {
          calls.push({ name: 'poll', at: now(), input: step });
          return (
            now() >= START.getTime() + 3 * HOUR ? { ended: 'rolled_out' } : {}
          ) satisfies RolloutStepAnswer;
        }),
      ],
      START,
    );
    now = () => engine.clock.now();
    try {
      await engine.client.startNew(RolloutNames.orchestration, { instanceId: INSTANCE, input });
      await engine.runUntil(START.getTime() + 4 * HOUR);
      const status = await engine.client.getStatus(INSTANCE);
      const continuations = engine.events.filter((e) => e.type === 'orchestration.continuedAsNew').length;

      expect(status?.runtimeStatus).toBe('Completed');
      expect(status?.output).toEqual({ outcome: 'rolled_out' });
      // 3 hours of 10 s polls, 50 polls per execution.
      expect(continuations).toBeGreaterThanOrEqual(20);
      expect(engine.longestHistory.get(INSTANCE) ?? 0).toBeLessThanOrEqual(HISTORY_BOUND);
      expect(calls.filter((c) => c.name === 'begin')).toHaveLength(1);
      const polls = calls.filter((c) => c.name === 'poll');
      expect(polls).toHaveLength(3 * 360);
      expect(polls.every((c, i) => c.at === START.getTime() + (i + 1) * 10_000)).toBe(true);
      // Every call gets the workflow's input; a poll also when the previous poll was answered (the
      // orchestration's clock, carried across each continuation): the poll before it, 10 s earlier.
      const withoutAnswer = ({ answeredAt: _answered, waitedSeconds: _waited, ...rest }: RolloutInput) =>
        rest;
      expect(calls.every((c) => JSON.stringify(withoutAnswer(c.input)) === JSON.stringify(input))).toBe(true);
      expect(polls.every((c) => Date.parse(c.input.answeredAt ?? '') === c.at - 10_000)).toBe(true);
    } finally {
      await engine.stop();
    }
  });
});
