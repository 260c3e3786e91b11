// The Azure Storage queue as the bridge sees it: send a message text, check that the queue answers.
// The queue is read by a Function with `messageEncoding: none`, so the JSON goes out as-is (no base64).
import { DefaultAzureCredential } from '@azure/identity';
import { QueueClient, StorageRetryPolicyType } from '@azure/storage-queue';
import type { QueueTarget } from './config.js';

export interface QueueSink {
  send(messageText: string): Promise<void>;
  /** Resolves when the queue is reachable (and, where the bridge may create it, exists). */
  probe(): Promise<void>;
}

export interface QueueSinkOptions {
  /** Per-request timeout; the bridge's own retry loop handles outages, not the SDK's. */
  requestTimeoutMs?: number;
}

export function createQueueSink(target: QueueTarget, options: QueueSinkOptions = {}): QueueSink {
  const pipelineOptions = {
    // One try per call: the outbox retries with its own backoff and keeps the message meanwhile,
    // so the SDK's internal retries would only hide an outage from the readiness probe.
    retryOptions: {
      retryPolicyType: StorageRetryPolicyType.EXPONENTIAL,
      maxTries: 1,
      tryTimeoutInMs: options.requestTimeoutMs ?? 10_000,
    },
  };
  const client =
    target.mode === 'connectionString'
      ? new QueueClient(target.connectionString, target.queueName, pipelineOptions)
      : new QueueClient(
          `${target.serviceUrl}/${target.queueName}`,
          new DefaultAzureCredential(),
          pipelineOptions,
        );
  // With a connection string (Azurite, or a key-based account) the bridge may create the queue. With an
  // identity it is expected to hold only "Storage Queue Data Message Sender", which cannot create queues;
  // infrastructure creates the queue there.
  const mayCreate = target.mode === 'connectionString';
  let created = false;

  return {
    async send(messageText) {
      await client.sendMessage(messageText);
    },
    async probe() {
      if (mayCreate && !created) {
        await client.createIfNotExists();
        created = true;
        return;
      }
      await client.getProperties();
    },
  };
}
