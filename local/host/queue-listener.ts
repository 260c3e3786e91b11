// Feeds one Storage queue to one queue-triggered function with the Functions host's semantics: messages
// are received with a lease, the handler gets the parsed body; success deletes the message; a failure
// makes it visible again after the visibility timeout; a message that has failed maxDequeueCount times
// (or arrives already past it) is copied to `<queue>-poison` and deleted, with a log line saying why.
// Messages come in batches as the host fetches them: a batch of up to batchSize, and the next one only
// once no more than newBatchThreshold are left in the handler, so up to batchSize + newBatchThreshold
// run at once (24 with the app's host.json), as on one Azure instance.
import { resolveAppSettings, type AppSettings } from './app-settings.js';
import { randomUUID } from 'node:crypto';
import type { DequeuedMessageItem, QueueClient, QueueServiceClient } from '@azure/storage-queue';
import type { Logger } from '../../shared/observability/logger.js';
import type { HandlerContext, QueueFunctionDefinition } from '../../shared/runtime/definitions.js';
import type { HostEventBus } from './events.js';
import type { WorkTracker } from './work-tracker.js';

export interface QueueListenerOptions {
  definition: QueueFunctionDefinition;
  service: QueueServiceClient;
  maxDequeueCount: number;
  /** How long a failed message stays invisible before its next delivery (host.json visibilityTimeout). */
  visibilityTimeoutMs: number;
  /** How many messages one fetch takes (host.json batchSize). */
  batchSize: number;
  /** A new batch is fetched once this few are left in the handler (host.json newBatchThreshold). */
  newBatchThreshold: number;
  pollIntervalMs: number;
  /** How long a received message stays leased to this host while its handler runs. */
  leaseSeconds: number;
  log: Logger;
  events: HostEventBus;
  work: WorkTracker;
  contextFor: (functionName: string, invocationId: string, dequeueCount: number) => HandlerContext;
  appSettings: AppSettings;
}

export interface QueueListener {
  readonly queueName: string;
  start(): Promise<void>;
  /** Stops receiving and waits for handlers in progress. */
  stop(): Promise<void>;
  /** Counts polls that found the queue empty while nothing was in progress. */
  readonly emptyPolls: number;
}

export function poisonQueueNameOf(queueName: string): string {
  return `${queueName}-poison`;
}

export function createQueueListener(options: QueueListenerOptions): QueueListener {
  const { definition, log, events, work } = options;
  const queueName = resolveAppSettings(definition.queueName, options.appSettings);
  const queue = options.service.getQueueClient(queueName);
  const poisonQueue = options.service.getQueueClient(poisonQueueNameOf(queueName));
  const listenerLog = log.with({ functionName: definition.name, queueName });

  let running = false;
  let inFlight = 0;
  let emptyPolls = 0;
  let wake: (() => void) | undefined;
  let loop: Promise<void> | undefined;
  const handlers = new Set<Promise<void>>();

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });

  async function poll(): Promise<void> {
    while (running) {
      if (inFlight > options.newBatchThreshold) {
        await sleep(options.pollIntervalMs);
        continue;
      }
      let received: DequeuedMessageItem[];
      try {
        const response = await queue.receiveMessages({
          numberOfMessages: Math.min(options.batchSize, 32),
          visibilityTimeout: options.leaseSeconds,
        });
        received = response.receivedMessageItems;
      } catch (error) {
        listenerLog.warn('receiving from the queue failed; retrying', { error });
        await sleep(options.pollIntervalMs * 5);
        continue;
      }
      if (received.length === 0) {
        if (inFlight === 0) emptyPolls += 1;
        await sleep(options.pollIntervalMs);
        continue;
      }
      for (const message of received) {
        const handling = handle(message).finally(() => handlers.delete(handling));
        handlers.add(handling);
      }
    }
  }

  async function handle(message: DequeuedMessageItem): Promise<void> {
    inFlight += 1;
    const done = work.begin();
    try {
      if (message.dequeueCount > options.maxDequeueCount) {
        // Delivered more often than allowed without a recorded failure (a previous host died mid-run).
        await poison(
          message,
          `dequeue count ${message.dequeueCount} exceeds maxDequeueCount ${options.maxDequeueCount}`,
        );
        return;
      }
      const invocationId = randomUUID();
      const context = options.contextFor(definition.name, invocationId, message.dequeueCount);
      events.emit({
        type: 'function.invoked',
        functionName: definition.name,
        trigger: 'queue',
        invocationId,
        dequeueCount: message.dequeueCount,
      });
      const startedAt = Date.now();
      try {
        await definition.handler(parseBody(message.messageText), context);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        context.log.warn('queue handler failed', { error: reason, dequeueCount: message.dequeueCount });
        events.emit({
          type: 'function.failed',
          functionName: definition.name,
          trigger: 'queue',
          invocationId,
          durationMs: Date.now() - startedAt,
          error: reason,
          dequeueCount: message.dequeueCount,
        });
        if (message.dequeueCount >= options.maxDequeueCount) await poison(message, reason);
        else await release(message);
        return;
      }
      events.emit({
        type: 'function.succeeded',
        functionName: definition.name,
        trigger: 'queue',
        invocationId,
        durationMs: Date.now() - startedAt,
      });
      await queue.deleteMessage(message.messageId, message.popReceipt);
    } catch (error) {
      // Storage errors while settling: the lease expires and the message comes back, as in Azure.
      listenerLog.error('could not settle a queue message', { messageId: message.messageId, error });
    } finally {
      inFlight -= 1;
      done();
      wake?.();
    }
  }

  async function release(message: DequeuedMessageItem): Promise<void> {
    await queue.updateMessage(
      message.messageId,
      message.popReceipt,
      undefined,
      Math.ceil(options.visibilityTimeoutMs / 1000),
    );
  }

  async function poison(message: DequeuedMessageItem, reason: string): Promise<void> {
    const poisonQueueName = poisonQueueNameOf(queueName);
    await poisonQueue.createIfNotExists();
    await poisonQueue.sendMessage(message.messageText);
    await queue.deleteMessage(message.messageId, message.popReceipt);
    listenerLog.error(`message moved to poison queue ${poisonQueueName}: ${reason}`, {
      messageId: message.messageId,
      dequeueCount: message.dequeueCount,
      maxDequeueCount: options.maxDequeueCount,
      reason,
    });
    events.emit({
      type: 'message.poisoned',
      functionName: definition.name,
      queueName,
      poisonQueueName,
      messageId: message.messageId,
      dequeueCount: message.dequeueCount,
      reason,
    });
  }

  return {
    queueName,
    get emptyPolls() {
      return emptyPolls;
    },
    start: async () => {
      await ensureQueue(queue);
      running = true;
      loop = poll();
    },
    stop: async () => {
      running = false;
      wake?.();
      await loop;
      await Promise.all([...handlers]);
    },
  };
}

async function ensureQueue(queue: QueueClient): Promise<void> {
  await queue.createIfNotExists();
}

/** Like the Functions host with messageEncoding "none": JSON bodies arrive parsed, anything else as text. */
function parseBody(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
