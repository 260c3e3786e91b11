// The repair workflow's history stays bounded while a restart, a recovery or a replacement is slow: the
// real repair orchestration runs on the local host's durable engine (durable-functions' replay) under a
// virtual clock, with scripted activities standing in for ARM and the cluster, because what is under
// test is what the workflow carries over continue-as-new: its reboot record, the restart's poller
// state, the reboot's time the recovery window counts from, and the replacement's time limit, and that
// no reboot or launch is sent again. The real activities run in test/e2e/ (node repair).
import { describe, expect, test } from 'vitest';
import type { RebootProgress, RebootStart } from '../../../shared/cloudprovider/types.js';
import {
  REPAIR_TASKS_PER_EXECUTION,
  RepairActivities,
  repairOrchestrator,
  type HealthCheck,
  type RecordedReboot,
  type RepairInput,
  type RepairStatus,
  type ReplaceOldInput,
} from '../../../shared/lifecycle/disruption/repair/repair-workflow.js';
import type { ReplacementCheck } from '../../../shared/lifecycle/disruption/replacements.js';
import { HISTORY_EVENTS_PER_TASK } from '../../../shared/lifecycle/durable/history-budget.js';
import { activity, orchestration } from '../../../shared/runtime/definitions.js';
import { RepairNames } from '../../../shared/runtime/function-names.js';
import { startVirtualDurableEngine } from '../../support/virtual-durable-engine.js';

const START = new Date('2026-11-30T10:00:00Z');
const MINUTE = 60_000;
const INSTANCE = 'repair-uid-1';
/** A poll is two tasks (three when a replacement is launched again): the budget, one over, the extras. */
const HISTORY_BOUND = HISTORY_EVENTS_PER_TASK * (REPAIR_TASKS_PER_EXECUTION + 2) + 4;

const input: RepairInput = {
  nodeClaim: { name: 'pool-1', uid: 'uid-1', nodePool: 'pool' },
  vmName: 'aks-pool-1',
  policy: { conditionType: 'Ready', conditionStatus: 'False', tolerationMs: 0, action: 'reboot' },
  condition: { type: 'Ready', status: 'False' },
  detail: 'Ready=False',
  firstStep: 'reboot',
  previous: { rebootsTried: 0 },
  escalation: { maxReboots: 1, recoveryMs: 30 * MINUTE },
  pollSeconds: 5,
  replacement: { name: 'pool-repl-1', nodePool: 'pool', replacementOf: 'pool-1', reason: 'Unhealthy' },
  replacementTimeoutMinutes: 30,
};

interface Script {
  /** Answer of the n-th reboot poll (from 1). */
  pollReboot: (poll: number) => RebootProgress;
  /** Health at a time (ms after START). */
  health: (elapsedMs: number) => HealthCheck;
}

async function runRepair(script: Script, repair: RepairInput = input) {
  const calls: { name: string; at: number; input: unknown }[] = [];
  let now = (): number => START.getTime();
  const record = (name: string, callInput: unknown) => calls.push({ name, at: now(), input: callInput });
  const named = (name: string) => calls.filter((c) => c.name === name);
  const engine = await startVirtualDurableEngine(
    [
      orchestration(RepairNames.orchestration, repairOrchestrator),
      activity(RepairActivities.begin.name, async (step) => (record('begin', step), 'ok')),
      activity(
        RepairActivities.learnPreemption.name,
        async (step) => (record('learnPreemption', step), null),
      ),
      activity(RepairActivities.reboot.name, async (step): Promise<RebootStart> => {
        record('reboot', step);
        return { pollerState: 'reboot-0' };
      }),
      activity<string>(RepairActivities.pollReboot.name, async (pollerState) => {
        record('pollReboot', pollerState);
        return script.pollReboot(named('pollReboot').length);
      }),
      activity<RecordedReboot>(RepairActivities.recordReboot.name, async (step) => {
        record('recordReboot', step);
        return null;
      }),
      activity(RepairActivities.check.name, async (step) => {
        record('check', step);
        return script.health(now() - START.getTime());
      }),
      activity<RecordedReboot>(RepairActivities.recover.name, async (step) => {
        record('recover', step);
        return null;
      }),
      activity(RepairActivities.launchReplacement.name, async (spec): Promise<ReplacementCheck> => {
        record('launchReplacement', spec);
        return { status: 'Pending' };
      }),
      activity(RepairActivities.checkReplacement.name, async (name): Promise<ReplacementCheck> => {
        record('checkReplacement', name);
        return { status: 'Pending' };
      }),
      activity<ReplaceOldInput>(RepairActivities.replace.name, async (step) => {
        record('replace', step);
        return null;
      }),
    ],
    START,
  );
  now = () => engine.clock.now();
  try {
    await engine.client.startNew(RepairNames.orchestration, { instanceId: INSTANCE, input: repair });
    await engine.runUntil(START.getTime() + 3 * 60 * MINUTE);
    return {
      status: await engine.client.getStatus(INSTANCE),
      continuations: engine.events.filter((e) => e.type === 'orchestration.continuedAsNew').length,
      longest: engine.longestHistory.get(INSTANCE) ?? 0,
      calls,
      named,
    };
  } finally {
    await engine.stop();
  }
}

describe('repair workflow history while a step is slow', () => {
  test('a restart polled for ten minutes continues as new, never restarts again, and the poller state chains on', async () => {
    const run = await runRepair({
      pollReboot: (poll) =>
        poll <= 120 ? { status: 'InProgress', pollerState: `reboot-${poll}` } : { status: 'Succeeded' },
      health: () => 'healthy',
    });

    expect(run.status?.runtimeStatus).toBe('Completed');
    const rebootedAt = new Date(START.getTime() + 121 * 5_000).toISOString();
    expect(run.status?.output).toEqual({ outcome: 'Recovered', rebootsTried: 1, lastRebootAt: rebootedAt });
    expect(run.continuations).toBeGreaterThanOrEqual(2);
    expect(run.longest).toBeLessThanOrEqual(HISTORY_BOUND);
    expect(run.named('begin')).toHaveLength(1);
    expect(run.named('reboot')).toHaveLength(1);
    expect(run.named('pollReboot').map((c) => c.input)).toEqual(
      Array.from({ length: 121 }, (_, index) => `reboot-${index}`),
    );
    expect(run.named('recordReboot').map((c) => (c.input as RecordedReboot).record)).toEqual([
      { rebootsTried: 1, lastRebootAt: rebootedAt },
    ]);
    expect(run.named('recover')).toHaveLength(1);
    // No carried state leaks into what the activities are given.
    expect(run.named('begin')[0]?.input).toEqual(input);
    expect((run.named('recover')[0]?.input as RecordedReboot).repair).toEqual(input);
  });

  test('a recovery wait and a replacement wait keep their clocks across continuations: escalated at the reboot + 30 min, replaced 30 min later', async () => {
    const run = await runRepair({
      pollReboot: () => ({ status: 'Succeeded' }),
      health: () => 'unhealthy',
    });

    expect(run.status?.runtimeStatus).toBe('Completed');
    const rebootedAt = START.getTime() + 5_000;
    expect(run.status?.output).toEqual({
      outcome: 'Replaced',
      replacement: 'pool-repl-1',
      replacementReady: false,
      rebootsTried: 1,
      lastRebootAt: new Date(rebootedAt).toISOString(),
    });
    expect((run.status?.customStatus as RepairStatus).phase).toBe('replacing');
    expect(run.continuations).toBeGreaterThan(5);
    expect(run.longest).toBeLessThanOrEqual(HISTORY_BOUND);
    // One reboot (maxReboots 1), however many executions the recovery wait took.
    expect(run.named('reboot')).toHaveLength(1);
    expect(run.named('recordReboot')).toHaveLength(1);
    // The last check is the one at the end of the recovery window; the replacement is launched then.
    const escalatedAt = rebootedAt + 30 * MINUTE;
    expect(Math.max(...run.named('check').map((c) => c.at))).toBe(escalatedAt);
    expect(run.named('launchReplacement').map((c) => c.at)).toEqual([escalatedAt]);
    expect(run.named('replace').map((c) => c.at)).toEqual([escalatedAt + 30 * MINUTE]);
    expect((run.named('replace')[0]?.input as ReplaceOldInput).why).toBe(
      'Ready=False did not clear within 1800 s of reboot 1',
    );
  });

  test("a spot eviction's replacement waited for past several continuations still shows preempted, launched once, the old node replaced at drainBy", async () => {
    const drainBy = START.getTime() + 20 * MINUTE;
    const preempted: RepairInput = {
      ...input,
      policy: { ...input.policy, action: 'preempted' },
      firstStep: 'preempted',
      drainBy: new Date(drainBy).toISOString(),
    };
    const run = await runRepair(
      { pollReboot: () => ({ status: 'Succeeded' }), health: () => 'unhealthy' },
      preempted,
    );

    expect(run.status?.runtimeStatus).toBe('Completed');
    expect(run.continuations).toBeGreaterThanOrEqual(4);
    expect(run.longest).toBeLessThanOrEqual(HISTORY_BOUND);
    expect((run.status?.customStatus as RepairStatus).phase).toBe('preempted');
    expect(run.named('begin')).toHaveLength(1);
    expect(run.named('learnPreemption')).toHaveLength(1);
    expect(run.named('reboot')).toEqual([]);
    expect(run.named('launchReplacement').map((c) => c.at)).toEqual([START.getTime()]);
    expect(run.named('replace').map((c) => c.at)).toEqual([drainBy]);
    expect((run.named('replace')[0]?.input as ReplaceOldInput).why).toBe('spot eviction notice');
  });
});
