// The per-NodeClaim Durable figures the day, the bench and the scale scenario print: division by the
// NodeClaims, the per-orchestration rows, the two burst extrapolations, and the scale scenario's peak
// second and activity slots, on hand-made snapshots.
import { describe, expect, test } from 'vitest';
import { createActivitySlots } from '../../../local/host/activity-slots.js';
import { createDurableWorkRecorder } from '../../../local/host/durable-work.js';
import {
  durableFigures,
  evenBurstPeak,
  flatRunDurableFigures,
  runDurableFigures,
  runDurableLines,
  topContributors,
} from '../../../local/scenarios/day/durable-figures.js';

describe('Durable figures per NodeClaim', () => {
  test('actions and history divide by the NodeClaims; rows come busiest first', () => {
    let now = 10_000;
    const recorder = createDurableWorkRecorder(() => now);
    for (let i = 0; i < 6; i++) recorder.action('launchMonitor', 'timerCompletions');
    recorder.action('terminateNodeClaim', 'orchestrationStarts');
    now = 11_000;
    recorder.action('terminateNodeClaim', 'activityStarts');
    recorder.historySaved({ instanceId: 'a', name: 'launchMonitor', history: [] });
    const figures = durableFigures(recorder.snapshot(), 2);
    expect(figures.actionsPerNodeClaim).toBe(4);
    expect(figures.byOrchestration.map((row) => [row.name, row.actionsPerNodeClaim])).toEqual([
      ['launchMonitor', 3],
      ['terminateNodeClaim', 1],
    ]);
    // "[]" is two bytes, one instance's, over two NodeClaims.
    expect(figures.historyBytesPerNodeClaim).toBe(1);
    expect(figures.peakActionsPerSecond).toBe(7);
    expect(figures.burstMeanActionsPerSecond).toBe(66.7);
    expect(figures.burstPeakActionsPerSecond).toBe(3500);
    expect(topContributors(figures)).toBe(
      'launchMonitor timerCompletions 3.00 (75%), terminateNodeClaim orchestrationStarts 0.50 (13%), terminateNodeClaim activityStarts 0.50 (13%)',
    );
  });

  test('an even burst adds up each arrival shifted profile', () => {
    // Per NodeClaim: 1 action in its first second, 2 in its third.
    const series = [
      { second: 100, actions: 10 },
      { second: 102, actions: 20 },
    ];
    // 3 arrivals a second over 2 s: second 0 gets 3, second 1 gets 3, second 2 gets 6, second 3 gets 6.
    expect(evenBurstPeak(series, 100, 10, 6, 2)).toBe(6);
    expect(evenBurstPeak(series, 100, 10, 6, 1)).toBe(12);
    expect(evenBurstPeak([], 100, 10)).toBe(0);
  });

  test("a run's figures: the peak second after its start, the actions before it, and the slots", () => {
    let now = 100_000;
    const work = createDurableWorkRecorder(() => now);
    const slots = createActivitySlots({ capacity: 2, now: () => now });
    // The stack's own work, before the run.
    work.action('provisioning', 'timerCompletions');
    const startedAt = 101_500;
    now = 102_000;
    for (let i = 0; i < 4; i++) work.action('launchMonitor', 'activityStarts');
    now = 105_000;
    work.action('launchMonitor', 'activityResults');
    work.action('provisioning', 'timerCompletions');
    const releases: (() => void)[] = [];
    for (let i = 0; i < 3; i++)
      slots.request(
        'awaitVmCreation',
        (release) => releases.push(release),
        () => undefined,
      );
    now = 150_000;
    releases.shift()?.();
    now = 151_000;
    releases.splice(0).forEach((release) => release());

    const run = runDurableFigures({
      work: work.snapshot(),
      slots: slots.snapshot(),
      nodeClaims: 2,
      startedAt,
    });
    expect(run.peakSecondAfterStart).toBe(1);
    expect(run.actionsBeforeStart).toBe(1);
    expect(run.durable.actionsPerNodeClaim).toBe(3.5);
    expect(run.slots).toMatchObject({
      capacity: 2,
      peakInUse: 2,
      allInUseSeconds: 46,
      executions: 3,
      queued: 1,
      waitP50Ms: 0,
      waitP99Ms: 45_000,
      waitMaxMs: 45_000,
      slotSeconds: 92,
    });
    expect(run.slots.byActivity).toEqual([
      {
        name: 'awaitVmCreation',
        executions: 3,
        peakInUse: 2,
        slotSeconds: 92,
        waitP99Ms: 45_000,
        waitMaxMs: 45_000,
      },
    ]);

    expect(runDurableLines(run, 50)).toEqual([
      'actions per NodeClaim lifetime: 3.5 over 2 NodeClaims (goal ≤ 15: met); launchMonitor 2.5, provisioning 1',
      'peak: 4 actions/s, 1 s into the run (goal ≤ 250/s in a 1,000-node burst; this scale-up was 50 nodes)',
      "history per NodeClaim: 0 B (each instance's peak, summed); largest one instance 0 B",
      'counted since the host started: 1 of the 7 actions came before the run',
      'activity slots: peak 2 of 2 in use, all 2 for 46 s; wait for a slot p50 0 ms, p99 45.0 s, max 45.0 s (1 of 3 work items waited)',
      'slot-seconds: 92 in all; awaitVmCreation 92 (peak 2)',
    ]);
    expect(runDurableLines(run, 1_000)[1]).toBe(
      'peak: 4 actions/s, 1 s into the run (goal ≤ 250/s in a 1,000-node burst: met)',
    );

    const flat = flatRunDurableFigures(run);
    expect(flat).toMatchObject({
      durableNodeClaims: 2,
      durableActions: 7,
      durableActionsPerNodeClaim: 3.5,
      'durableActionsPerNodeClaim.launchMonitor': 2.5,
      'durableActionsPerNodeClaim.provisioning': 1,
      durablePeakActionsPerSecond: 4,
      durablePeakActionsSecondAfterStart: 1,
      durableActionsBeforeStart: 1,
      activitySlots: 2,
      activitySlotsPeakInUse: 2,
      activitySlotsAllInUseSeconds: 46,
      activitySlotWaitP99Ms: 45_000,
      'activitySlotSeconds.awaitVmCreation': 92,
    });
    expect(Object.values(flat).every((value) => Number.isFinite(value))).toBe(true);
  });
});
