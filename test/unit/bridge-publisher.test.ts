// The publisher's retry logic, against an in-memory queue that can be switched off. The real Storage
// queue (Azurite through @azure/storage-queue) is exercised in test/integration/bridge.test.ts; here the
// sink is a stand-in so that outages can be made to start and end at exact points.
import { describe, expect, it } from 'vitest';
import { ChangeBuffer } from '../../bridge/change-buffer.js';
import { QueuePublisher } from '../../bridge/publisher.js';
import type { QueueSink } from '../../bridge/queue-sink.js';
import type { ObjectChange } from '../../shared/events/cloud-event.js';
import { silentLogger } from '../../shared/observability/logger.js';

class SwitchableQueue implements QueueSink {
  up = true;
  readonly messages: string[] = [];
  attempts = 0;
  async send(messageText: string): Promise<void> {
    this.attempts += 1;
    await Promise.resolve();
    if (!this.up) throw new Error('connect ECONNREFUSED 127.0.0.1:10001');
    this.messages.push(messageText);
  }
  async probe(): Promise<void> {
    await Promise.resolve();
    if (!this.up) throw new Error('connect ECONNREFUSED 127.0.0.1:10001');
  }
}

function change(uid: string, resourceVersion = '1'): ObjectChange {
  return { kind: 'NodeClaim', name: `claim-${uid}`, uid, resourceVersion, changeType: 'ADDED' };
}

function setup(queue: SwitchableQueue, signalIntervalMs = 0) {
  let id = 0;
  const buffer = new ChangeBuffer({
    capacity: 100,
    newEventId: () => `e${++id}`,
    now: Date.now,
    signalIntervalMs,
  });
  const publisher = new QueuePublisher({
    buffer,
    sink: queue,
    render: (pending) => `${pending.change.uid}@${pending.change.resourceVersion}`,
    concurrency: 3,
    backoff: { initialMs: 5, maxMs: 20, factor: 2, jitter: 0 },
    probeIntervalMs: 60_000,
    logger: silentLogger,
  });
  return { buffer, publisher };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('QueuePublisher', () => {
  it('sends everything in the outbox and empties it', async () => {
    const queue = new SwitchableQueue();
    const { buffer, publisher } = setup(queue);
    for (let i = 0; i < 10; i++) buffer.offer(change(`u${i}`));
    publisher.start();
    expect(await publisher.flush(5_000)).toBe(true);
    expect(queue.messages.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `u${i}@1`).sort());
    expect(publisher.stats().sent).toBe(10);
    expect(publisher.queueReachable(60_000)).toBe(true);
    publisher.stop();
  });

  it('sends a provisioning signal held back by its interval once the interval has passed', async () => {
    const queue = new SwitchableQueue();
    const { buffer, publisher } = setup(queue, 50);
    const pod = (uid: string): ObjectChange => ({ ...change(uid), kind: 'Pod', namespace: 'shop' });
    publisher.start();
    buffer.offer(pod('p1'));
    publisher.kick();
    await until(() => queue.messages.length === 1, 'the first signal');
    // Three more pods in quick succession: one more signal, after the interval, naming the newest.
    for (const uid of ['p2', 'p3', 'p4']) {
      buffer.offer(pod(uid));
      publisher.kick();
    }
    expect(await publisher.flush(5_000)).toBe(true);
    expect(queue.messages).toEqual(['p1@1', 'p4@1']);
    publisher.stop();
  });

  it('keeps every change through an outage and delivers them once the queue is back', async () => {
    const queue = new SwitchableQueue();
    queue.up = false;
    const { buffer, publisher } = setup(queue);
    publisher.start();
    for (let i = 0; i < 20; i++) {
      buffer.offer(change(`u${i}`));
      publisher.kick();
    }
    await until(() => publisher.stats().consecutiveFailures >= 3, 'several failed attempts');
    expect(publisher.queueReachable(60_000)).toBe(false);
    expect(buffer.size).toBe(20);
    expect(queue.messages).toEqual([]);

    queue.up = true;
    expect(await publisher.flush(5_000)).toBe(true);
    expect(new Set(queue.messages).size).toBe(20);
    expect(publisher.queueReachable(60_000)).toBe(true);
    publisher.stop();
  });

  it('does not hammer a queue that is down: one probe per backoff step, no sends', async () => {
    const queue = new SwitchableQueue();
    queue.up = false;
    const { buffer, publisher } = setup(queue);
    for (let i = 0; i < 50; i++) buffer.offer(change(`u${i}`));
    publisher.start();
    await until(() => publisher.stats().consecutiveFailures >= 4, 'four failed probes');
    expect(queue.attempts).toBe(0);
    publisher.stop();
  });

  it('a send that fails mid-stream leaves the change in the outbox and stops further sends', async () => {
    const queue = new SwitchableQueue();
    const { buffer, publisher } = setup(queue);
    publisher.start();
    await until(() => publisher.queueReachable(60_000), 'the first probe');
    queue.up = false;
    buffer.offer(change('a'));
    publisher.kick();
    await until(() => publisher.stats().sendFailures === 1, 'the failed send');
    expect(buffer.size).toBe(1);
    expect(publisher.stats().lastQueueError).toMatch(/ECONNREFUSED/);
    queue.up = true;
    expect(await publisher.flush(5_000)).toBe(true);
    expect(queue.messages).toEqual(['a@1']);
    publisher.stop();
  });

  it('flush gives up at its deadline while the queue stays down', async () => {
    const queue = new SwitchableQueue();
    queue.up = false;
    const { buffer, publisher } = setup(queue);
    buffer.offer(change('a'));
    publisher.start();
    expect(await publisher.flush(50)).toBe(false);
    expect(buffer.size).toBe(1);
    publisher.stop();
  });
});
