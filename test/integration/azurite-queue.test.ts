import { QueueServiceClient } from '@azure/storage-queue';
import { describe, expect, it } from 'vitest';
import { startAzurite } from '../../local/azurite/launcher.js';
import { useAzurite } from '../support/azurite.js';

describe('Azurite queue service', () => {
  const connectionString = useAzurite();

  it('round-trips a message: create queue, send, receive, delete', async () => {
    const service = QueueServiceClient.fromConnectionString(connectionString());
    const queue = service.getQueueClient(`roundtrip-${Date.now()}`);
    await queue.create();

    const body = JSON.stringify({ kind: 'NodeClaim', name: 'general-purpose-abc12' });
    const sent = await queue.sendMessage(body);
    expect(sent.messageId).toBeTruthy();

    const received = await queue.receiveMessages({ numberOfMessages: 1, visibilityTimeout: 30 });
    expect(received.receivedMessageItems).toHaveLength(1);
    const [message] = received.receivedMessageItems;
    expect(message?.messageText).toBe(body);
    expect(message?.dequeueCount).toBe(1);

    // While invisible, nobody else receives it.
    const again = await queue.receiveMessages({ numberOfMessages: 1 });
    expect(again.receivedMessageItems).toHaveLength(0);

    await queue.deleteMessage(message!.messageId, message!.popReceipt);
    const properties = await queue.getProperties();
    expect(properties.approximateMessagesCount).toBe(0);
    await queue.delete();
  });

  it('stops cleanly: the endpoint no longer answers and a fresh instance starts', async () => {
    const own = await startAzurite();
    const service = QueueServiceClient.fromConnectionString(own.connectionString, {
      retryOptions: { maxTries: 1 },
    });
    await service.getProperties();
    await own.stop();
    await expect(service.getProperties()).rejects.toThrow();
  });
});
