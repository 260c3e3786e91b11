// Exercises the in-process host's orchestration runtime with small test-only definitions, driven by
// durable-functions' own replay engine and backed by a real Azurite (the host needs its queue service).
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as df from 'durable-functions';
import type { OrchestrationContext } from 'durable-functions';
import { describe, expect, it } from 'vitest';
import {
  createScaledClock,
  systemClock,
  type Clock,
  type HostEvent,
  type LocalHost,
} from '../../local/host/index.js';
import { silentLogger } from '../../shared/observability/logger.js';
import type { FunctionDefinition } from '../../shared/runtime/definitions.js';
import { useAzurite } from '../support/azurite.js';
import { nextHostEvent, useLocalHosts } from '../support/local-hosts.js';

const connectionString = useAzurite();
const createHost = useLocalHosts(connectionString);

function startHost(
  definitions: FunctionDefinition[],
  extra: { stateDirectory?: string; clock?: Clock } = {},
): LocalHost {
  return createHost({
    definitions,
    // One real second is ten clock minutes: durable timers of minutes fire in tens of milliseconds.
    clock: createScaledClock(600),
    log: silentLogger,
    ...extra,
  });
}

const finished = (instanceId: string) => (event: HostEvent) =>
  (event.type === 'orchestration.completed' ||
    event.type === 'orchestration.failed' ||
    event.type === 'orchestration.terminated') &&
  event.instanceId === instanceId;

describe('orchestrations through the replay engine', () => {
  it('calls an activity, waits on durable timers in a loop, and completes with the result; the activity runs once while the orchestrator body replays', async () => {
    let orchestratorBodyRuns = 0;
    let activityRuns = 0;
    const seenTimes: number[] = [];
    const definitions: FunctionDefinition[] = [
      {
        kind: 'activity',
        name: 'Double',
        handler: async (input) => {
          activityRuns += 1;
          return (input as { value: number }).value * 2;
        },
      },
      {
        kind: 'orchestration',
        name: 'DoubleThenWait',
        handler: function* (context: OrchestrationContext) {
          orchestratorBodyRuns += 1;
          const input = context.df.getInput() as { value: number; waits: number };
          const doubled = (yield context.df.callActivity('Double', { value: input.value })) as number;
          for (let i = 0; i < input.waits; i += 1) {
            const fireAt = new Date(context.df.currentUtcDateTime.getTime() + 5 * 60_000);
            yield context.df.createTimer(fireAt);
            if (!context.df.isReplaying) seenTimes.push(context.df.currentUtcDateTime.getTime());
            context.df.setCustomStatus({ waited: i + 1 });
          }
          return { doubled };
        },
      },
    ];
    const host = startHost(definitions);
    await host.start();
    const done = nextHostEvent(host, finished('double-1'));
    await host.orchestrations.startNew('DoubleThenWait', {
      instanceId: 'double-1',
      input: { value: 21, waits: 3 },
    });
    await done;

    const status = await host.orchestrations.getStatus('double-1');
    expect(status?.runtimeStatus).toBe('Completed');
    expect(status?.output).toEqual({ doubled: 42 });
    expect(status?.customStatus).toEqual({ waited: 3 });
    expect(status?.input).toEqual({ value: 21, waits: 3 });
    expect(activityRuns).toBe(1);
    // One run per episode: start, activity result, three timers.
    expect(orchestratorBodyRuns).toBe(5);
    // Each timer resumed the orchestrator at least five clock minutes after the previous point.
    expect(seenTimes).toHaveLength(3);
    for (let i = 1; i < seenTimes.length; i += 1) {
      expect(seenTimes[i]! - seenTimes[i - 1]!).toBeGreaterThanOrEqual(5 * 60_000);
    }
  });

  it('fans out with Task.all and collects every result in order', async () => {
    const definitions: FunctionDefinition[] = [
      { kind: 'activity', name: 'Square', handler: async (input) => (input as number) ** 2 },
      {
        kind: 'orchestration',
        name: 'FanOut',
        handler: function* (context: OrchestrationContext) {
          const tasks = [1, 2, 3, 4, 5].map((n) => context.df.callActivity('Square', n));
          const results = (yield context.df.Task.all(tasks)) as number[];
          return results;
        },
      },
    ];
    const host = startHost(definitions);
    await host.start();
    const done = nextHostEvent(host, finished('fan-1'));
    await host.orchestrations.startNew('FanOut', { instanceId: 'fan-1' });
    await done;
    expect((await host.orchestrations.getStatus('fan-1'))?.output).toEqual([1, 4, 9, 16, 25]);
  });

  it('surfaces an activity failure to the orchestrator, which catches it; retries run each attempt', async () => {
    let attempts = 0;
    const definitions: FunctionDefinition[] = [
      {
        kind: 'activity',
        name: 'AlwaysFails',
        handler: async () => {
          attempts += 1;
          throw new Error('SkuNotAvailable: Standard_D2s_v5 is not available in zone 2');
        },
      },
      {
        kind: 'orchestration',
        name: 'CatchesFailure',
        handler: function* (context: OrchestrationContext) {
          const caught: string[] = [];
          try {
            yield context.df.callActivity('AlwaysFails', 'once');
          } catch (error) {
            caught.push((error as Error).message);
          }
          try {
            yield context.df.callActivityWithRetry('AlwaysFails', new df.RetryOptions(1000, 3), 'retried');
          } catch (error) {
            caught.push((error as Error).message);
          }
          return caught;
        },
      },
    ];
    const host = startHost(definitions);
    await host.start();
    const done = nextHostEvent(host, finished('fail-1'));
    await host.orchestrations.startNew('CatchesFailure', { instanceId: 'fail-1' });
    await done;
    const status = await host.orchestrations.getStatus('fail-1');
    expect(status?.runtimeStatus).toBe('Completed');
    const caught = status?.output as string[];
    expect(caught).toHaveLength(2);
    for (const message of caught) expect(message).toContain('SkuNotAvailable');
    expect(attempts).toBe(1 + 3);
  });

  it('fails the orchestration when the orchestrator throws, with its message', async () => {
    const definitions: FunctionDefinition[] = [
      {
        kind: 'orchestration',
        name: 'Throws',
        // eslint-disable-next-line require-yield
        handler: function* () {
          throw new Error('invalid NodeClaim');
        },
      },
    ];
    const host = startHost(definitions);
    await host.start();
    const done = nextHostEvent(host, finished('throws-1'));
    await host.orchestrations.startNew('Throws', { instanceId: 'throws-1' });
    await done;
    const status = await host.orchestrations.getStatus('throws-1');
    expect(status?.runtimeStatus).toBe('Failed');
    expect(String(status?.output)).toContain('invalid NodeClaim');
  });

  it('refuses a second start of a running instance, terminates it, then allows a restart and purge', async () => {
    const definitions: FunctionDefinition[] = [
      {
        kind: 'orchestration',
        name: 'WaitsADay',
        handler: function* (context: OrchestrationContext) {
          yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 24 * 3600_000));
          return 'woke';
        },
      },
    ];
    const host = startHost(definitions);
    await host.start();
    const started = nextHostEvent(host, (event) => event.type === 'orchestration.started');
    await host.orchestrations.startNew('WaitsADay', { instanceId: 'term-1' });
    await started;
    await expect(host.orchestrations.startNew('WaitsADay', { instanceId: 'term-1' })).rejects.toThrow(
      /already exists/,
    );

    await host.orchestrations.terminate('term-1', 'NodeClaim deleted');
    const status = await host.orchestrations.getStatus('term-1');
    expect(status?.runtimeStatus).toBe('Terminated');
    expect(status?.output).toBe('NodeClaim deleted');

    await host.orchestrations.purge('term-1');
    expect(await host.orchestrations.getStatus('term-1')).toBeUndefined();
    await host.orchestrations.startNew('WaitsADay', { instanceId: 'term-1' });
    expect((await host.orchestrations.getStatus('term-1'))?.runtimeStatus).toMatch(/Pending|Running/);
  });

  it('continues as new with fresh history', async () => {
    const definitions: FunctionDefinition[] = [
      { kind: 'activity', name: 'Increment', handler: async (input) => (input as number) + 1 },
      {
        kind: 'orchestration',
        name: 'Counter',
        handler: function* (context: OrchestrationContext) {
          const next = (yield context.df.callActivity('Increment', context.df.getInput())) as number;
          if (next < 3) {
            context.df.continueAsNew(next);
            return undefined;
          }
          return next;
        },
      },
    ];
    const host = startHost(definitions);
    await host.start();
    let continued = 0;
    host.on((event) => {
      if (event.type === 'orchestration.continuedAsNew') continued += 1;
    });
    const done = nextHostEvent(host, finished('counter-1'));
    await host.orchestrations.startNew('Counter', { instanceId: 'counter-1', input: 0 });
    await done;
    expect((await host.orchestrations.getStatus('counter-1'))?.output).toBe(3);
    expect(continued).toBe(2);
  });

  it('resumes a waiting orchestration after a restart from its state directory', async () => {
    const stateDirectory = await mkdtemp(join(tmpdir(), 'host-state-'));
    let activityRuns = 0;
    const definitions: FunctionDefinition[] = [
      {
        kind: 'activity',
        name: 'Record',
        handler: async (input) => {
          activityRuns += 1;
          return `recorded ${String(input)}`;
        },
      },
      {
        kind: 'orchestration',
        name: 'RecordThenWait',
        handler: function* (context: OrchestrationContext) {
          const first = (yield context.df.callActivity('Record', 'first')) as string;
          // An hour: on the first host's real clock it cannot fire before that host stops; on the second
          // host's clock, scaled 600×, it fires six real seconds after the first host set it.
          yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 3600_000));
          const second = (yield context.df.callActivity('Record', 'second')) as string;
          return [first, second];
        },
      },
    ];
    try {
      const first = startHost(definitions, { stateDirectory, clock: systemClock });
      await first.start();
      await first.orchestrations.startNew('RecordThenWait', { instanceId: 'restart-1' });
      await first.waitForIdle();
      expect(activityRuns).toBe(1);
      expect((await first.orchestrations.getStatus('restart-1'))?.runtimeStatus).toBe('Running');
      await first.stop();
      expect(await readdir(stateDirectory)).toEqual(['restart-1.json']);

      const second = startHost(definitions, { stateDirectory });
      const done = nextHostEvent(second, finished('restart-1'));
      await second.start();
      await done;
      const status = await second.orchestrations.getStatus('restart-1');
      expect(status?.runtimeStatus).toBe('Completed');
      expect(status?.output).toEqual(['recorded first', 'recorded second']);
      expect(activityRuns).toBe(2);
    } finally {
      await rm(stateDirectory, { recursive: true, force: true });
    }
  });

  it('runs a sub-orchestration and returns its output to the parent', async () => {
    const definitions: FunctionDefinition[] = [
      {
        kind: 'orchestration',
        name: 'Child',
        handler: function* (context: OrchestrationContext) {
          yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 60_000));
          return `child of ${String(context.df.getInput())}`;
        },
      },
      {
        kind: 'orchestration',
        name: 'Parent',
        handler: function* (context: OrchestrationContext) {
          return (yield context.df.callSubOrchestrator('Child', 'parent-1', 'child-1')) as string;
        },
      },
    ];
    const host = startHost(definitions);
    await host.start();
    const done = nextHostEvent(host, finished('parent-1'));
    await host.orchestrations.startNew('Parent', { instanceId: 'parent-1' });
    await done;
    expect((await host.orchestrations.getStatus('parent-1'))?.output).toBe('child of parent-1');
    expect((await host.orchestrations.getStatus('child-1'))?.runtimeStatus).toBe('Completed');
  });
});
