// registration-race end to end: NodeClaims launched through the bridge and the host, Nodes registered by
// the kubelet simulator with the unregistered taint, two DaemonSets tolerating not-ready scheduled by the
// real kube-scheduler and DaemonSet controller. No pod may bind before registration synced its Node.
// It also prints the launch → outcome figures with host.json's Durable queue polling in force (the local
// host waits for each control and work-item queue poll as the Azure Storage provider does).
import { expect, test } from 'vitest';
import { readDurableQueuePolling, type QueuePollerStats } from '../../local/host/durable-polling.js';
import { registrationRace } from '../../local/scenarios/registration-race.js';
import { firstTimeIn, type NodeClaimTimeline } from '../../local/view/phases.js';
import { expectInvariantsHold, playEndToEnd } from './e2e-stack.js';

test('no pod binds to a Node before its labels and taints are synced', { timeout: 180_000 }, async () => {
  const report = await playEndToEnd(registrationRace);
  expectInvariantsHold(report);
  // Every bind is in the evidence: 2 DaemonSets × 4 Nodes.
  expect(report.outcome.figures.binds).toBe(8);
  expect(report.timelines.map((t) => t.segments.map((s) => s.phase))).toContainEqual(
    expect.arrayContaining(['Launching', 'Registered', 'Initialized']),
  );

  // Launch → outcome with the polling interval in force: counts and order are asserted, times printed.
  const launches = report.timelines.map(launchFigures);
  expect(launches).toHaveLength(4);
  for (const launch of launches) {
    expect(launch.accepted, `${launch.name} got its providerID`).toBeDefined();
    expect(launch.launched, `${launch.name} was Launched`).toBeDefined();
    expect(launch.registered, `${launch.name} was Registered`).toBeDefined();
    expect(launch.accepted!).toBeLessThanOrEqual(launch.launched!);
    expect(launch.launched!).toBeLessThanOrEqual(launch.registered!);
  }
  const polling = report.durablePolling;
  expect(polling, 'the in-process host reports its Durable queue polls').toBeDefined();
  // Each launch monitor's start, activity results and timers went through a control queue, its polls
  // of the VM operation through the work-item queue.
  expect(polling!.controlQueues.received).toBeGreaterThanOrEqual(4 * 2);
  expect(polling!.workItemQueue.received).toBeGreaterThanOrEqual(4);
  // No message waits past the interval host.json bounds polling at (the mechanism's bound, not a timing).
  const { maxIntervalMs } = readDurableQueuePolling();
  expect(polling!.controlQueues.maxWaitMs).toBeLessThanOrEqual(maxIntervalMs);
  expect(polling!.workItemQueue.maxWaitMs).toBeLessThanOrEqual(maxIntervalMs);

  const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
  const mean = (values: number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;
  const perQueue = (name: string, stats: QueuePollerStats): string =>
    `  ${name}: ${stats.received} messages, mean wait ${stats.received === 0 ? '—' : `${(stats.totalWaitMs / stats.received).toFixed(0)} ms`}, longest ${stats.maxWaitMs.toFixed(0)} ms`;
  console.log(
    [
      `launch → outcome with maxQueuePollingInterval ${maxIntervalMs} ms (host.json), speed-scaled emulator latencies, real-time polls:`,
      ...launches.map(
        (l) =>
          `  ${l.name}: created → VM PUT accepted ${seconds(l.accepted! - l.created)}, accepted → Launched ${seconds(l.launched! - l.accepted!)}${l.launchedSeen ? `, Launched → Registered ${seconds(l.registered! - l.launched!)}` : ' (Launched and Registered seen in one observation)'}`,
      ),
      `  mean created → Launched ${seconds(mean(launches.map((l) => l.launched! - l.created)))}, created → Registered ${seconds(mean(launches.map((l) => l.registered! - l.created)))}`,
      'Durable messages waiting for their queue poll:',
      perQueue('control queues', polling!.controlQueues),
      perQueue('work-item queue', polling!.workItemQueue),
    ].join('\n'),
  );
});

function launchFigures(timeline: NodeClaimTimeline): {
  name: string;
  created: number;
  accepted?: number;
  launched?: number;
  registered?: number;
  launchedSeen: boolean;
} {
  return {
    name: timeline.name,
    created: timeline.segments[0]?.from ?? 0,
    accepted: firstTimeIn(timeline, 'Launching'),
    // A NodeClaim whose Launched and Registered came within one observation skips the Launched phase.
    launched: firstTimeIn(timeline, 'Launched') ?? firstTimeIn(timeline, 'Registered'),
    registered: firstTimeIn(timeline, 'Registered'),
    launchedSeen: firstTimeIn(timeline, 'Launched') !== undefined,
  };
}
