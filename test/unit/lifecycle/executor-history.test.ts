// The disruption executor's history stays bounded while its replacements are slow to initialize: the
// real executor orchestration runs on the local host's durable engine (durable-functions' replay) under
// a virtual clock, with scripted activities standing in for the cluster, because what is under test is
// what the workflow carries over continue-as-new: the validated command, the wait's deadline and the
// replacements already Initialized, and that validate, begin and the launches are never run again. The
// real activities run in test/e2e/ (consolidation and drift).
import { describe, expect, test } from 'vitest';
import {
  DisruptionActivities,
  EXECUTOR_TASKS_PER_EXECUTION,
  disruptionOrchestrator,
  type AbandonStep,
  type ReplacementStep,
} from '../../../shared/lifecycle/disruption/executor.js';
import type { ExecutorInput } from '../../../shared/lifecycle/disruption/command-workflow.js';
import type { DisruptionCommand } from '../../../shared/lifecycle/disruption/methods/method.js';
import type { ReplacementCheck } from '../../../shared/lifecycle/disruption/replacements.js';
import { HISTORY_EVENTS_PER_TASK } from '../../../shared/lifecycle/durable/history-budget.js';
import { activity, orchestration } from '../../../shared/runtime/definitions.js';
import { DisruptionNames } from '../../../shared/runtime/function-names.js';
import { startVirtualDurableEngine } from '../../support/virtual-durable-engine.js';

const START = new Date('2026-11-30T10:00:00Z');
const MINUTE = 60_000;
const INSTANCE = 'consolidate-uid-pool';
/** A wait round of two replacements is three tasks: the budget, one round over it, and the extra events. */
const HISTORY_BOUND = HISTORY_EVENTS_PER_TASK * (EXECUTOR_TASKS_PER_EXECUTION + 2) + 4;

const command: DisruptionCommand = {
  method: 'single-node-consolidation',
  reason: 'Underutilized',
  nodePool: { name: 'pool', uid: 'uid-pool' },
  candidates: [{ name: 'pool-abcde', uid: 'uid-candidate' }],
  replacements: [{}, {}],
  detail: 'as decided',
  decidedAt: START.toISOString(),
  validateAfterSeconds: 15,
  attempt: 0,
  consolidationType: 'single',
};
const input: ExecutorInput = { command, pollSeconds: 5, timeoutMinutes: 30 };
const validated: DisruptionCommand = { ...command, detail: 'as validated' };

/** Replacement `index` is Initialized from `readyAfter[index]` ms after START (never when undefined). */
async function runExecutor(readyAfter: (number | undefined)[]) {
  const calls: { name: string; at: number; input: unknown }[] = [];
  let now = (): number => START.getTime();
  const record = (name: string, callInput: unknown) => calls.push({ name, at: now(), input: callInput });
  const engine = await startVirtualDurableEngine(
    [
      orchestration(DisruptionNames.orchestration, disruptionOrchestrator),
      activity<ExecutorInput>(DisruptionActivities.validate.name, async (step) => {
        record('validate', step);
        return { command: validated };
      }),
      activity<ExecutorInput>(DisruptionActivities.begin.name, async (step) => {
        record('begin', step);
        return 'ok';
      }),
      activity<ReplacementStep>(DisruptionActivities.launch.name, async (step) => {
        record('launch', step);
        return { status: 'Pending' } satisfies ReplacementCheck;
      }),
      activity<ReplacementStep>(DisruptionActivities.check.name, async (step) => {
        record('check', step);
        const ready = readyAfter[step.index];
        return (
          ready !== undefined && now() >= START.getTime() + ready
            ? { status: 'Initialized' }
            : { status: 'Pending' }
        ) satisfies ReplacementCheck;
      }),
      activity<ExecutorInput>(DisruptionActivities.complete.name, async (step) => {
        record('complete', step);
        return [step.command.candidates[0]!.name];
      }),
      activity<AbandonStep>(DisruptionActivities.abandon.name, async (step) => {
        record('abandon', step);
        return null;
      }),
    ],
    START,
  );
  now = () => engine.clock.now();
  try {
    await engine.client.startNew(DisruptionNames.orchestration, { instanceId: INSTANCE, input });
    await engine.runUntil(START.getTime() + 2 * 60 * MINUTE);
    return {
      status: await engine.client.getStatus(INSTANCE),
      continuations: engine.events.filter((e) => e.type === 'orchestration.continuedAsNew').length,
      longest: engine.longestHistory.get(INSTANCE) ?? 0,
      calls,
      named: (name: string) => calls.filter((c) => c.name === name),
    };
  } finally {
    await engine.stop();
  }
}

describe('disruption executor history while replacements are slow to initialize', () => {
  test('a 20-minute wait continues as new, never validates, begins or launches again, and checks a ready replacement no more', async () => {
    const run = await runExecutor([2 * MINUTE, 20 * MINUTE]);

    expect(run.status?.runtimeStatus).toBe('Completed');
    expect(run.status?.output).toMatchObject({ outcome: 'Disrupted', deleted: ['pool-abcde'] });
    expect(run.continuations).toBeGreaterThan(2);
    expect(run.longest).toBeLessThanOrEqual(HISTORY_BOUND);
    expect(run.named('validate')).toHaveLength(1);
    expect(run.named('begin')).toHaveLength(1);
    expect(run.named('launch').map((c) => (c.input as ReplacementStep).index)).toEqual([0, 1]);
    // Replacement 0 initialized at 2 minutes: never checked after that, in any execution.
    const checksOfFirst = run.named('check').filter((c) => (c.input as ReplacementStep).index === 0);
    expect(Math.max(...checksOfFirst.map((c) => c.at))).toBeLessThan(START.getTime() + 2 * MINUTE + 5_000);
    // Every later call still carries the validated command, and no carried state leaks into activities.
    for (const call of run.calls.filter((c) => c.name !== 'validate')) {
      const step = call.input as ExecutorInput | ReplacementStep;
      const carried = 'index' in step ? step.input : step;
      expect(carried).toEqual({ ...input, command: validated });
    }
    expect(run.named('complete')).toHaveLength(1);
  });

  test('the timeout counts from the first execution: a replacement that never initializes is abandoned at it', async () => {
    const run = await runExecutor([undefined, undefined]);

    expect(run.status?.output).toMatchObject({ outcome: 'Abandoned' });
    expect(run.continuations).toBeGreaterThan(5);
    expect(run.longest).toBeLessThanOrEqual(HISTORY_BOUND);
    const began = run.named('begin')[0]!.at;
    expect(run.named('abandon').map((c) => c.at)).toEqual([began + 30 * MINUTE]);
    expect(run.named('complete')).toEqual([]);
  });
});
