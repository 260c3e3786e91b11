// The in-process host's queue and timer triggers against a real Azurite, with test-only definitions.
import { QueueServiceClient } from '@azure/storage-queue';
import { describe, expect, it } from 'vitest';
import { createScaledClock } from '../../local/host/index.js';
import { createLogger, silentLogger } from '../../shared/observability/logger.js';
import type { FunctionDefinition } from '../../shared/runtime/definitions.js';
import { useAzurite } from '../support/azurite.js';
import { nextHostEvent, useLocalHosts } from '../support/local-hosts.js';

const connectionString = useAzurite();
const createHost = useLocalHosts(connectionString);

const uniqueQueue = (prefix: string): string =>
  `${prefix}-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e6)}`;

describe('queue trigger', () => {
  it('delivers the parsed body with its dequeue count and deletes the message on success', async () => {
    const queueName = uniqueQueue('deliver');
    const received: { body: unknown; dequeueCount: number | undefined }[] = [];
    const definitions: FunctionDefinition[] = [
      {
        kind: 'queue',
        name: 'OnMessage',
        queueName,
        connection: 'Storage',
        handler: async (body, context) => {
          received.push({ body, dequeueCount: context.dequeueCount });
        },
      },
    ];
    const host = createHost({ definitions, log: silentLogger });
    await host.start();
    const queue = QueueServiceClient.fromConnectionString(connectionString()).getQueueClient(queueName);
    await queue.sendMessage(JSON.stringify({ kind: 'NodeClaim', name: 'np-abc12', uid: 'u-1' }));
    await queue.sendMessage('not json');
    await host.waitForIdle();

    expect(received).toHaveLength(2);
    expect(received).toContainEqual({
      body: { kind: 'NodeClaim', name: 'np-abc12', uid: 'u-1' },
      dequeueCount: 1,
    });
    expect(received).toContainEqual({ body: 'not json', dequeueCount: 1 });
    expect((await queue.getProperties()).approximateMessagesCount).toBe(0);
    await queue.delete();
  });

  it('retries a failing message and moves it to <queue>-poison after maxDequeueCount, logging the last error', async () => {
    const queueName = uniqueQueue('poison');
    const dequeueCounts: (number | undefined)[] = [];
    const logLines: string[] = [];
    const definitions: FunctionDefinition[] = [
      {
        kind: 'queue',
        name: 'AlwaysThrows',
        queueName,
        connection: 'Storage',
        handler: async (_body, context) => {
          dequeueCounts.push(context.dequeueCount);
          throw new Error(`unknown message kind (attempt ${String(context.dequeueCount)})`);
        },
      },
    ];
    const host = createHost({
      definitions,
      maxDequeueCount: 3,
      log: createLogger({ component: 'test', sink: (_level, line) => logLines.push(line) }),
    });
    await host.start();
    const service = QueueServiceClient.fromConnectionString(connectionString());
    const queue = service.getQueueClient(queueName);
    const poisoned = nextHostEvent(host, (event) => event.type === 'message.poisoned');
    await queue.sendMessage(JSON.stringify({ kind: 'Bogus' }));
    const event = await poisoned;

    expect(dequeueCounts).toEqual([1, 2, 3]);
    expect(event).toMatchObject({
      type: 'message.poisoned',
      poisonQueueName: `${queueName}-poison`,
      dequeueCount: 3,
      reason: 'unknown message kind (attempt 3)',
    });
    const poisonQueue = service.getQueueClient(`${queueName}-poison`);
    const peeked = await poisonQueue.peekMessages({ numberOfMessages: 5 });
    expect(peeked.peekedMessageItems.map((message) => message.messageText)).toEqual([
      JSON.stringify({ kind: 'Bogus' }),
    ]);
    expect((await queue.getProperties()).approximateMessagesCount).toBe(0);
    const poisonLine = logLines.find((line) => line.includes('moved to poison queue'));
    expect(poisonLine).toContain('unknown message kind (attempt 3)');
    await Promise.all([queue.delete(), poisonQueue.delete()]);
  });

  it('fetches the next batch once newBatchThreshold are left in the handler: batchSize + newBatchThreshold at once', async () => {
    const queueName = uniqueQueue('batch');
    let handled = 0;
    let inHandler = 0;
    let mostAtOnce = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const definitions: FunctionDefinition[] = [
      {
        kind: 'queue',
        name: 'Slow',
        queueName,
        connection: 'Storage',
        handler: async () => {
          handled += 1;
          // Two of the first batch of three return at once; the third and the whole next batch wait
          // until four run together, which only a fetch at one left in the handler allows.
          if (handled <= 2) return;
          inHandler += 1;
          mostAtOnce = Math.max(mostAtOnce, inHandler);
          if (inHandler === 4) release();
          await gate;
          inHandler -= 1;
        },
      },
    ];
    const host = createHost({
      definitions,
      batchSize: 3,
      newBatchThreshold: 1,
      log: silentLogger,
    });
    const queue = QueueServiceClient.fromConnectionString(connectionString()).getQueueClient(queueName);
    await queue.createIfNotExists();
    for (let i = 0; i < 8; i += 1) await queue.sendMessage(String(i));
    await host.start();
    await host.waitForIdle();
    expect(handled).toBe(8);
    // One left (the third) plus a batch of three; never more than batchSize + newBatchThreshold.
    expect(mostAtOnce).toBe(4);
    await queue.delete();
  });
});

describe('timer trigger', () => {
  it('fires on its NCRONTAB schedule on a scaled clock and never stacks overrunning runs', async () => {
    const starts: number[] = [];
    let concurrent = 0;
    let mostConcurrent = 0;
    const clock = createScaledClock(60); // a clock minute per real second
    const definitions: FunctionDefinition[] = [
      {
        kind: 'timer',
        name: 'EveryTenSeconds',
        schedule: '*/10 * * * * *',
        handler: async () => {
          starts.push(clock.now());
          concurrent += 1;
          mostConcurrent = Math.max(mostConcurrent, concurrent);
          // 35 clock seconds: longer than three periods.
          await new Promise((resolve) => setTimeout(resolve, 35_000 / 60));
          concurrent -= 1;
        },
      },
    ];
    const host = createHost({
      definitions,
      clock,
      log: silentLogger,
    });
    let skipped = 0;
    host.on((event) => {
      if (event.type === 'timer.skipped') skipped += 1;
    });
    await host.start();
    while (starts.length < 3) await new Promise((resolve) => setTimeout(resolve, 20));
    await host.stop();

    expect(mostConcurrent).toBe(1);
    expect(skipped).toBeGreaterThanOrEqual(1);
    for (let i = 1; i < starts.length; i += 1) {
      // An overrun pushes the next run past its end: never a queued run right behind it.
      expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(35_000);
    }
  });

  it('runs on demand with triggerTimer', async () => {
    let runs = 0;
    const definitions: FunctionDefinition[] = [
      {
        kind: 'timer',
        name: 'Yearly',
        schedule: '0 0 0 1 Jan *',
        handler: async (timer, context) => {
          expect(timer?.isPastDue).toBe(false);
          expect(context.functionName).toBe('Yearly');
          runs += 1;
        },
      },
    ];
    const host = createHost({ definitions, log: silentLogger });
    await host.start();
    await host.triggerTimer('Yearly');
    await host.triggerTimer('Yearly');
    expect(runs).toBe(2);
    await expect(host.triggerTimer('Missing')).rejects.toThrow(/No timer function/);
  });
});
