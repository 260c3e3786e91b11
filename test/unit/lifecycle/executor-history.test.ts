// The disruption executor's wait for its replacements (the second version, woken by them; the first's
// polling is replayed in test/unit/functions/disruption-functions.test.ts): the real orchestration runs on the local
// host's durable engine (durable-functions' replay) under a virtual clock, with scripted activities
// standing in for the cluster. Under test: a replacement's wake ends the wait at once and its Durable
// cost does not grow with the wait; without wakes, the fallback checks still finish the command; and
// the history stays bounded over continue-as-new, carrying the validated command, the wait's deadline
// and the replacements already Initialized, never running validate, begin or the launches again. The
// real activities, and the real wakes from node-join, run in test/e2e/ (consolidation and drift).
import { describe, expect, test } from 'vitest';
import {
  DisruptionActivities,
  EXECUTOR_TASKS_PER_EXECUTION,
  replacementSpecs,
  type AbandonStep,
  type ReplacementStep,
} from '../../../shared/lifecycle/disruption/executor.js';
import {
  DisruptionV2Activities,
  FALLBACK_MAX_DOUBLINGS,
  disruptionOrchestratorV2,
} from '../../../shared/lifecycle/disruption/executor-v2.js';
import type { ExecutorInput } from '../../../shared/lifecycle/disruption/command-workflow.js';
import type { DisruptionCommand } from '../../../shared/lifecycle/disruption/methods/method.js';
import type { ReplacementCheck } from '../../../shared/lifecycle/disruption/replacements.js';
import type { ReplacementWake } from '../../../shared/lifecycle/nodeclaims/replacement-wake.js';
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
const input: ExecutorInput = { command, pollSeconds: 5, fallbackSeconds: 180, timeoutMinutes: 30 };
/** Long enough that the fallback rounds alone fill an execution's task budget several times. */
const longInput: ExecutorInput = { ...input, timeoutMinutes: 1440 };
const FALLBACK_MS = 180_000;
/** When the launches are done: after the validation's delay. */
const LAUNCHED = START.getTime() + 15_000;
const names = replacementSpecs(command).map((spec) => spec.name);
const validated: DisruptionCommand = { ...command, detail: 'as validated' };

interface ScriptedWake {
  /** ms after START */
  at: number;
  index: number;
  status: ReplacementWake['status'];
}

/**
 * Replacement `index` is Initialized from `readyAfter[index]` ms after START (never when undefined), or
 * failed from `failedAfter[index]`; each wake is raised at its time, as node-join or a launch failure
 * would.
 */
async function runExecutor(
  readyAfter: (number | undefined)[],
  options: { wakes?: ScriptedWake[]; failedAfter?: (number | undefined)[]; start?: ExecutorInput } = {},
) {
  const calls: { name: string; at: number; input: unknown }[] = [];
  let now = (): number => START.getTime();
  const record = (name: string, callInput: unknown) => calls.push({ name, at: now(), input: callInput });
  const engine = await startVirtualDurableEngine(
    [
      orchestration(DisruptionNames.orchestrationV2, disruptionOrchestratorV2),
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
      activity<ReplacementStep>(DisruptionV2Activities.checkNow.name, async (step) => {
        record('check', step);
        const ready = readyAfter[step.index];
        const failed = options.failedAfter?.[step.index];
        if (failed !== undefined && now() >= START.getTime() + failed) {
          return { status: 'Failed', why: 'launch failed' } satisfies ReplacementCheck;
        }
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
    await engine.client.startNew(DisruptionNames.orchestrationV2, {
      instanceId: INSTANCE,
      input: options.start ?? input,
    });
    const wakes = [...(options.wakes ?? [])].sort((a, b) => a.at - b.at);
    // A timer of its own brings the clock to each wake's time (the clock moves only to a due timer).
    for (const wake of wakes) engine.clock.setTimer(START.getTime() + wake.at, () => undefined);
    for (const wake of wakes) {
      await engine.runUntil(START.getTime() + wake.at);
      const event: ReplacementWake = { replacement: names[wake.index]!, status: wake.status };
      await engine.client.raiseEvent(INSTANCE, DisruptionNames.replacementChanged, event);
    }
    await engine.runUntil(START.getTime() + 25 * 60 * MINUTE);
    return {
      actions: engine.durableWork().byOrchestration[DisruptionNames.orchestrationV2]?.actions ?? 0,
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

describe('disruption executor wait, woken by its replacements', () => {
  test('a wake ends the wait at once, with no check, and the Durable cost does not grow with the wait', async () => {
    const soon = await runExecutor([20_000, 30_000], {
      wakes: [
        { at: 20_000, index: 0, status: 'Initialized' },
        { at: 30_000, index: 1, status: 'Initialized' },
      ],
    });
    const late = await runExecutor([50_000, 70_000], {
      wakes: [
        { at: 50_000, index: 0, status: 'Initialized' },
        { at: 70_000, index: 1, status: 'Initialized' },
      ],
    });

    expect(soon.status?.output).toMatchObject({ outcome: 'Disrupted', deleted: ['pool-abcde'] });
    expect(soon.named('complete').map((c) => c.at)).toEqual([START.getTime() + 30_000]);
    expect(late.status?.output).toMatchObject({ outcome: 'Disrupted' });
    expect(late.named('complete').map((c) => c.at)).toEqual([START.getTime() + 70_000]);
    // Each wake begins a new round with its own fallback, so waits answered by wakes are never checked,
    // and a wait twice as long costs the same actions.
    expect([...soon.named('check'), ...late.named('check')]).toEqual([]);
    expect(late.actions).toBe(soon.actions);
    expect(soon.actions).toBeGreaterThan(0);
  });

  test('a Failed wake checks that replacement at once and abandons: the fallback is not waited for', async () => {
    const run = await runExecutor([undefined, 20_000], {
      failedAfter: [25_000, undefined],
      wakes: [
        { at: 20_000, index: 1, status: 'Initialized' },
        { at: 25_000, index: 0, status: 'Failed' },
      ],
    });

    expect(run.status?.output).toMatchObject({ outcome: 'Abandoned', why: 'launch failed' });
    expect(run.named('check').map((c) => [(c.input as ReplacementStep).index, c.at])).toEqual([
      [0, START.getTime() + 25_000],
    ]);
    expect(run.named('abandon').map((c) => c.at)).toEqual([START.getTime() + 25_000]);
  });

  test('without wakes (lost, or a replacement made before them), the fallback rounds finish the command', async () => {
    const run = await runExecutor([20_000, 30_000]);

    expect(run.status?.output).toMatchObject({ outcome: 'Disrupted' });
    // Launched at 15 s (after the validation's delay); the first fallback round finds both Initialized.
    expect(run.named('complete').map((c) => c.at)).toEqual([LAUNCHED + FALLBACK_MS]);
    expect(run.named('check')).toHaveLength(2);
  });

  test('each look that finds the replacements on their way doubles the next, up to 4×; a wake starts over', async () => {
    const run = await runExecutor([undefined, 20 * MINUTE], {
      wakes: [{ at: 20 * MINUTE, index: 1, status: 'Initialized' }],
      start: { ...input, timeoutMinutes: 40 },
    });

    expect(run.status?.output).toMatchObject({ outcome: 'Abandoned' });
    const looks = run
      .named('check')
      .filter((c) => (c.input as ReplacementStep).index === 0)
      .map((c) => (c.at - LAUNCHED) / MINUTE);
    expect(3 * 2 ** FALLBACK_MAX_DOUBLINGS).toBe(12);
    // Looks 3 and 6 minutes apart; the next, 12 minutes on, is cut short by replacement 1's wake at 19.75
    // minutes after the launch; from it 3 and 6 minutes again; the last at the timeout (40), which abandons.
    expect(looks).toEqual([3, 9, 22.75, 28.75, 40]);
  });

  test('a look that finds a lost wake (a replacement Initialized that never woke it) starts the period over', async () => {
    // Replacement 1 is Initialized 5 minutes after the start, but its wake is lost.
    const run = await runExecutor([undefined, 5 * MINUTE], { start: { ...input, timeoutMinutes: 40 } });

    const looks = run
      .named('check')
      .filter((c) => (c.input as ReplacementStep).index === 0)
      .map((c) => (c.at - LAUNCHED) / MINUTE);
    // 3, then 6 minutes on (9), where replacement 1 is found Initialized: the next period is 3 again (12),
    // then 6 (18), then 12 (30); the last at the timeout (40), which abandons.
    expect(looks).toEqual([3, 9, 12, 18, 30, 40]);
    expect(run.named('check').filter((c) => (c.input as ReplacementStep).index === 1)).toHaveLength(2);
  });

  test('a workflow started before the fallback setting looks every 36 polls, not doubled, as it did', async () => {
    const { fallbackSeconds: _none, ...before } = { ...input, timeoutMinutes: 10 };
    const run = await runExecutor([undefined, undefined], { start: before });

    const looks = run
      .named('check')
      .filter((c) => (c.input as ReplacementStep).index === 0)
      .map((c) => (c.at - LAUNCHED) / MINUTE);
    // The last at the timeout, which abandons.
    expect(looks).toEqual([3, 6, 9, 10]);
  });
});

describe('disruption executor history while replacements are slow to initialize', () => {
  test('an 800-minute wait continues as new, never validates, begins or launches again, and checks a ready replacement no more', async () => {
    const run = await runExecutor([2 * MINUTE, 800 * MINUTE], { start: longInput });

    expect(run.status?.runtimeStatus).toBe('Completed');
    expect(run.status?.output).toMatchObject({ outcome: 'Disrupted', deleted: ['pool-abcde'] });
    // Looks 12 minutes apart, three tasks each, fill an execution's budget in about 6 hours.
    expect(run.continuations).toBeGreaterThanOrEqual(1);
    expect(run.longest).toBeLessThanOrEqual(HISTORY_BOUND);
    expect(run.named('validate')).toHaveLength(1);
    expect(run.named('begin')).toHaveLength(1);
    expect(run.named('launch').map((c) => (c.input as ReplacementStep).index)).toEqual([0, 1]);
    // Replacement 0 initialized at 2 minutes: checked by the next fallback round, then never again.
    const checksOfFirst = run.named('check').filter((c) => (c.input as ReplacementStep).index === 0);
    expect(Math.max(...checksOfFirst.map((c) => c.at))).toBeLessThanOrEqual(
      START.getTime() + 2 * MINUTE + FALLBACK_MS,
    );
    // Every later call still carries the validated command, and no carried state leaks into activities.
    for (const call of run.calls.filter((c) => c.name !== 'validate')) {
      const step = call.input as ExecutorInput | ReplacementStep;
      const carried = 'index' in step ? step.input : step;
      expect(carried).toEqual({ ...longInput, command: validated });
    }
    expect(run.named('complete')).toHaveLength(1);
  });

  test('the timeout counts from the first execution: a replacement that never initializes is abandoned at it', async () => {
    const run = await runExecutor([undefined, undefined], { start: longInput });

    expect(run.status?.output).toMatchObject({ outcome: 'Abandoned' });
    expect(run.continuations).toBeGreaterThanOrEqual(3);
    expect(run.longest).toBeLessThanOrEqual(HISTORY_BOUND);
    const began = run.named('begin')[0]!.at;
    expect(run.named('abandon').map((c) => c.at)).toEqual([began + longInput.timeoutMinutes * MINUTE]);
    expect(run.named('complete')).toEqual([]);
  });
});
