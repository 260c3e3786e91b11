// The per-NodeClaim Durable figures the day and the bench print: division by the NodeClaims that launched,
// the per-orchestration rows, and the two burst extrapolations, on a hand-made snapshot.
import { describe, expect, test } from 'vitest';
import { createDurableWorkRecorder } from '../../../local/host/durable-work.js';
import {
  durableFigures,
  evenBurstPeak,
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
});
