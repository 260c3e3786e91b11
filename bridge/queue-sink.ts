// The Azure Storage queue as the bridge sees it: send a message text, check that the bridge can send.
// The queue is read by a Function with `messageEncoding: none`, so the JSON goes out as-is (no base64).
import { randomUUID } from 'node:crypto';
import { DefaultAzureCredential, type TokenCredential } from '@azure/identity';
import { isRestError, QueueClient, StorageRetryPolicyType } from '@azure/storage-queue';
import { toBridgeProbeEvent } from '../shared/events/cloud-event.js';
import { queueClientOptions } from '../shared/azure/storage-tls.js';
import type { QueueTarget } from './config.js';

export interface QueueSink {
  send(messageText: string): Promise<void>;
  /** Resolves when the bridge can send to the queue (and, where the bridge may create it, it exists). */
  probe(): Promise<void>;
}

export interface QueueSinkOptions {
  /** Per-request timeout; the bridge's own retry loop handles outages, not the SDK's. */
  requestTimeoutMs?: number;
  /** The identity's credential in serviceUrl mode; DefaultAzureCredential (workload identity) by default. */
  credential?: TokenCredential;
  /** Extra CA to trust for the queue service URL (the local storage front's); unset in Azure. */
  caCertPem?: string;
  /** CloudEvent `source` of the readiness probes. */
  source?: string;
}

/** The one data action "Storage Queue Data Message Sender" grants, and all the bridge needs. */
export const SEND_DATA_ACTION = 'Microsoft.Storage/storageAccounts/queueServices/queues/messages/add/action';

/** A probe message expires unread after this long, so probes never pile up behind a stopped function. */
const PROBE_TIME_TO_LIVE_SECONDS = 300;

/** Storage refused the bridge's identity (403): no retry fixes this, a role assignment does. */
export class QueuePermissionError extends Error {
  override readonly name = 'QueuePermissionError';
  readonly dataAction = SEND_DATA_ACTION;
  constructor(
    readonly queueName: string,
    readonly errorCode: string,
    options: { cause: unknown },
  ) {
    super(
      `Storage refused to let the bridge's identity send to queue ${queueName} (403 ${errorCode}): ` +
        `it needs the data action ${SEND_DATA_ACTION} on that queue; grant the role ` +
        `"Storage Queue Data Message Sender" on the queue to the bridge's identity (as infra/bicep and infra/terraform do)`,
      options,
    );
  }
}

export function createQueueSink(target: QueueTarget, options: QueueSinkOptions = {}): QueueSink {
  const pipelineOptions = queueClientOptions(
    {
      // One try per call: the outbox retries with its own backoff and keeps the message meanwhile,
      // so the SDK's internal retries would only hide an outage from the readiness probe.
      retryOptions: {
        retryPolicyType: StorageRetryPolicyType.EXPONENTIAL,
        maxTries: 1,
        tryTimeoutInMs: options.requestTimeoutMs ?? 10_000,
      },
    },
    options.caCertPem,
  );
  const client =
    target.mode === 'connectionString'
      ? new QueueClient(target.connectionString, target.queueName, pipelineOptions)
      : new QueueClient(
          `${target.serviceUrl}/${target.queueName}`,
          options.credential ?? new DefaultAzureCredential(),
          pipelineOptions,
        );
  // With a connection string (Azurite, or a key-based account) the bridge may create the queue. With an
  // identity it is expected to hold only "Storage Queue Data Message Sender", which cannot create queues;
  // infrastructure creates the queue there.
  const mayCreate = target.mode === 'connectionString';
  let created = false;
  const source = options.source ?? '/event-bridge';

  const explained = (error: unknown): unknown => {
    if (!isRestError(error) || error.statusCode !== 403) return error;
    const details = error.details as { errorCode?: unknown } | undefined;
    const code = typeof details?.errorCode === 'string' ? details.errorCode : (error.code ?? 'Forbidden');
    return new QueuePermissionError(target.queueName, code, { cause: error });
  };

  return {
    async send(messageText) {
      await client.sendMessage(messageText).catch((error: unknown) => {
        throw explained(error);
      });
    },
    async probe() {
      if (mayCreate) {
        // A key may do anything, creating the queue included; that it answers is enough.
        if (!created) {
          await client.createIfNotExists();
          created = true;
          return;
        }
        await client.getProperties();
        return;
      }
      // Why a message and not a read: "Storage Queue Data Message Sender", all the bridge's identity
      // holds, grants one data action (messages/add/action) and no control action, so Get Queue Metadata
      // is refused (403) even when sending works. Only a sent message proves what readiness must mean,
      // "I can send"; the queue trigger recognizes the probe's type and drops it (object-events.ts), and
      // its time-to-live removes it if no function reads the queue. An idle bridge probes once per probe
      // interval, a busy one not at all (every send is a success).
      const probe = toBridgeProbeEvent({ id: randomUUID(), source, time: new Date() });
      await client
        .sendMessage(JSON.stringify(probe), { messageTimeToLive: PROBE_TIME_TO_LIVE_SECONDS })
        .catch((error: unknown) => {
          throw explained(error);
        });
    },
  };
}
