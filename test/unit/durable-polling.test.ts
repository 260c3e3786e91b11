// The local host waits for the Durable queues' polls as the Azure Storage provider's pollers would, at
// the interval host.json sets; these tests hold the back-off's shape, the poll a message waits for after
// an idle spell and after a busy one, and that the host takes the interval from the host.json it is given.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OrchestrationContext } from 'durable-functions';
import { afterEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../local/host/clock.js';
import {
  createBackoff,
  createQueuePoller,
  parseTimeSpanMs,
  partitionOf,
  readDurableQueuePolling,
} from '../../local/host/durable-polling.js';
import { createLocalHost, type LocalHost } from '../../local/host/index.js';
import { silentLogger } from '../../shared/observability/logger.js';
import type { FunctionDefinition } from '../../shared/runtime/definitions.js';

/** A clock that moves only when told to, running each timer at its time and the work it starts. */
function manualClock(start: number): Clock & { advanceTo(at: number): Promise<void>; pending(): number } {
  let now = start;
  let sequence = 0;
  const timers = new Map<number, { at: number; callback: () => void }>();
  const settle = async (): Promise<void> => {
    for (let round = 0; round < 20; round += 1) await new Promise((resolve) => setImmediate(resolve));
  };
  return {
    now: () => now,
    setTimer: (at, callback) => {
      const id = (sequence += 1);
      timers.set(id, { at, callback });
      return () => timers.delete(id);
    },
    pending: () => timers.size,
    advanceTo: async (at) => {
      await settle();
      for (;;) {
        const due = [...timers.entries()]
          .filter(([, timer]) => timer.at <= at)
          .sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
        if (due === undefined) break;
        timers.delete(due[0]);
        now = Math.max(now, due[1].at);
        due[1].callback();
        await settle();
      }
      now = Math.max(now, at);
      await settle();
    },
  };
}

const middle = (): number => 0.5; // the jitter factor 1.0: the increases are exactly floor × 2^k

describe('the Azure Storage provider back-off', () => {
  it('polls again at once after a message, then waits 50 ms, and doubles the increase up to the maximum', () => {
    const backoff = createBackoff(2_000, middle);
    const waits = Array.from({ length: 11 }, () => backoff.next());
    expect(waits).toEqual([0, 50, 100, 150, 250, 450, 850, 1650, 2000, 2000, 2000]);
    backoff.reset();
    expect([backoff.next(), backoff.next(), backoff.next()]).toEqual([0, 50, 100]);
  });

  it('jitters each increase by ±20% and never exceeds the maximum or drops below the floor', () => {
    const low = createBackoff(30_000, () => 0);
    const high = createBackoff(30_000, () => 0.999_999);
    const lows = Array.from({ length: 16 }, () => low.next());
    const highs = Array.from({ length: 16 }, () => high.next());
    expect(lows.slice(0, 4)).toEqual([0, 50, 90, 130]);
    expect(highs[2]).toBeCloseTo(110, 3);
    expect(Math.max(...lows, ...highs)).toBe(30_000);
    expect(lows.at(-1)).toBe(30_000);
  });

  it('a maximum below the floor polls at the floor', () => {
    const backoff = createBackoff(10, middle);
    expect([backoff.next(), backoff.next(), backoff.next()]).toEqual([0, 50, 50]);
  });
});

describe('a queue poller', () => {
  it('after an idle spell a message waits for the next poll of the grown interval; right after one, within the floor', async () => {
    const clock = manualClock(0);
    const poller = createQueuePoller({ clock, maxIntervalMs: 2_000, random: middle });
    const taken: [string, number][] = [];
    const receive = (name: string, visibleAt?: number): void =>
      poller.receive({ deliver: () => taken.push([name, clock.now()]), abandon: () => undefined, visibleAt });
    // Polls from the start: 0, 0, 50, 150, 300, 550, 1000, 1850, 3500, 5500, … 119500, 121500.
    await clock.advanceTo(120_000);
    receive('after idle');
    expect(poller.waiting).toBe(1);
    await clock.advanceTo(125_000);
    expect(taken).toEqual([['after idle', 121_500]]);
    // That poll found a message: the next polls are at 121500 (at once), 121550, 121650, 121800, 122050,
    // 122500, 123350, 125000, 127000, …
    receive('busy', 125_000);
    await clock.advanceTo(125_000);
    expect(taken[1]).toEqual(['busy', 125_000]);
    // Right after a poll that found one, the next message waits less than the floor: polls at 125000,
    // 125050, …
    receive('next', 125_010);
    await clock.advanceTo(126_000);
    expect(taken[2]).toEqual(['next', 125_050]);
    expect(poller.stats).toMatchObject({ received: 3, maxWaitMs: 1_500 });
  });

  it('many messages before one poll are taken together, and a cancelled poller abandons what waits', async () => {
    const clock = manualClock(0);
    const poller = createQueuePoller({ clock, maxIntervalMs: 30_000, random: middle });
    await clock.advanceTo(600_000);
    const taken: number[] = [];
    let abandoned = 0;
    for (let index = 0; index < 3; index += 1)
      poller.receive({ deliver: () => taken.push(clock.now()), abandon: () => (abandoned += 1) });
    await clock.advanceTo(700_000);
    expect(new Set(taken).size).toBe(1);
    expect(taken[0]! - 600_000).toBeGreaterThan(0);
    expect(taken[0]! - 600_000).toBeLessThanOrEqual(30_000);
    await clock.advanceTo(1_000_000);
    poller.receive({ deliver: () => taken.push(clock.now()), abandon: () => (abandoned += 1) });
    poller.cancel();
    await clock.advanceTo(2_000_000);
    expect([taken.length, abandoned, poller.waiting]).toEqual([3, 1, 0]);
  });

  it('spreads instances over the control queues by a stable hash', () => {
    const partitions = ['launch-a', 'launch-b', 'terminate-c', 'replace-d', 'provisioning-batcher'].map(
      (id) => partitionOf(id, 4),
    );
    expect(partitions.every((partition) => partition >= 0 && partition < 4)).toBe(true);
    expect(partitionOf('launch-a', 4)).toBe(partitions[0]);
    expect(
      new Set(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((id) => partitionOf(id, 4))).size,
    ).toBeGreaterThan(1);
  });
});

describe('host.json', () => {
  it('reads TimeSpans as host.json writes them', () => {
    expect(parseTimeSpanMs('00:00:02')).toBe(2_000);
    expect(parseTimeSpanMs('00:00:00.500')).toBe(500);
    expect(parseTimeSpanMs('00:01:30')).toBe(90_000);
    expect(parseTimeSpanMs('1.00:00:00')).toBe(86_400_000);
    expect(() => parseTimeSpanMs('2s')).toThrow(/TimeSpan/);
    expect(() => parseTimeSpanMs('00:61:00')).toThrow(/TimeSpan/);
  });

  it("the app's host.json bounds the durable queues' polling at 2 s over 4 partitions", () => {
    expect(readDurableQueuePolling()).toEqual({ maxIntervalMs: 2_000, partitionCount: 4 });
  });
});

describe('the local host takes the polling interval from host.json', () => {
  let directory: string | undefined;
  const hosts: LocalHost[] = [];
  afterEach(async () => {
    await Promise.all(hosts.splice(0).map((host) => host.stop()));
    if (directory) await rm(directory, { recursive: true, force: true });
    directory = undefined;
  });

  const definitions: FunctionDefinition[] = [
    { kind: 'activity', name: 'Echo', handler: (input) => Promise.resolve(input) },
    {
      kind: 'orchestration',
      name: 'EchoOnce',
      handler: function* (context: OrchestrationContext) {
        return (yield context.df.callActivity('Echo', context.df.getInput())) as unknown;
      },
    },
  ];

  /** Starts a host whose host.json says `interval`, idles two minutes, starts one orchestration. */
  async function startAfterIdle(
    interval: string | undefined,
  ): Promise<{ waitedMs: number; completed: boolean }> {
    directory ??= await mkdtemp(join(tmpdir(), 'durable-polling-'));
    const path = join(directory, `host-${interval ?? 'default'}.json`);
    const storageProvider = { type: 'AzureStorage', partitionCount: 4, maxQueuePollingInterval: interval };
    await writeFile(
      path,
      JSON.stringify({ version: '2.0', extensions: { durableTask: { storageProvider } } }),
    );
    const clock = manualClock(Date.parse('2026-01-01T00:00:00Z'));
    const host = createLocalHost({
      definitions,
      // No queue function is registered, so nothing connects to this account.
      storageConnectionString: 'UseDevelopmentStorage=true',
      clock,
      hostJsonPath: path,
      pollingRandom: middle,
      log: silentLogger,
    });
    hosts.push(host);
    await host.start();
    const start = clock.now();
    await clock.advanceTo(start + 120_000);
    await host.orchestrations.startNew('EchoOnce', { instanceId: 'echo-1', input: 'hello' });
    await clock.advanceTo(start + 240_000);
    const status = await host.orchestrations.getStatus('echo-1');
    const stats = host.durablePollingStats();
    expect(stats.controlQueues.received).toBe(2); // the start and the activity's result
    expect(stats.workItemQueue.received).toBe(1);
    return {
      waitedMs: stats.controlQueues.maxWaitMs + stats.workItemQueue.maxWaitMs,
      completed: status?.runtimeStatus === 'Completed' && status.output === 'hello',
    };
  }

  it('waits for the poll host.json paces: 850 ms at 1 s, 3.2 s at 10 s, 21.7 s at the 30 s default', async () => {
    // Idle 120 s from the start, the polls are at …, 119850, 120850 (1 s); …, 113200, 123200 (10 s);
    // 0, 0, 50, 150, 300, 550, 1000, 1850, 3500, 6750, 13200, 26050, 51700, 81700, 111700, 141700 (the
    // 30 s default). The activity's work item and its result are taken without a further wait: the
    // work-item queue's polls count from the same start, and the result's control queue polls again at
    // once after the poll that took the start.
    expect(await startAfterIdle('00:00:01')).toEqual({ waitedMs: 850, completed: true });
    expect(await startAfterIdle('00:00:10')).toEqual({ waitedMs: 3_200, completed: true });
    expect(await startAfterIdle(undefined)).toEqual({ waitedMs: 21_700, completed: true });
  });
});
