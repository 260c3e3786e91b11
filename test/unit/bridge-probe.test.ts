// The bridge's readiness probe as a message: the probe CloudEvent the bridge sends in identity mode, the
// queue trigger dropping it (no phase, no poison queue), and a refused send turning into one error line
// that names the missing data action and the role to grant. The real Storage path (the storage front
// with the shipped roles) is test/integration/storage-front.test.ts.
import { describe, expect, it } from 'vitest';
import { ChangeBuffer } from '../../bridge/change-buffer.js';
import { QueuePublisher } from '../../bridge/publisher.js';
import { QueuePermissionError, SEND_DATA_ACTION, type QueueSink } from '../../bridge/queue-sink.js';
import {
  BRIDGE_PROBE_EVENT_TYPE,
  isBridgeProbeEvent,
  MalformedEventError,
  parseObjectChangeEvent,
  toBridgeProbeEvent,
} from '../../shared/events/cloud-event.js';
import type { LifecycleDependencies } from '../../shared/lifecycle/dependencies.js';
import { handleObjectEvent } from '../../shared/lifecycle/bridge-events/object-events.js';
import { createLogger } from '../../shared/observability/logger.js';
import type { HandlerContext } from '../../shared/runtime/definitions.js';

const probe = toBridgeProbeEvent({ id: 'p1', source: '/clusters/c/event-bridge', time: new Date(0) });

describe('the probe event', () => {
  it('is a CloudEvent of its own type, recognized as text, bytes or parsed JSON', () => {
    expect(probe).toEqual({
      specversion: '1.0',
      id: 'p1',
      source: '/clusters/c/event-bridge',
      type: BRIDGE_PROBE_EVENT_TYPE,
      time: '1970-01-01T00:00:00.000Z',
    });
    const text = JSON.stringify(probe);
    expect(isBridgeProbeEvent(text)).toBe(true);
    expect(isBridgeProbeEvent(Buffer.from(text))).toBe(true);
    expect(isBridgeProbeEvent(JSON.parse(text))).toBe(true);
  });

  it('is not an object change (without the trigger recognizing it, it would be poisoned)', () => {
    expect(() => parseObjectChangeEvent(JSON.stringify(probe))).toThrow(MalformedEventError);
    expect(isBridgeProbeEvent('not json')).toBe(false);
    expect(isBridgeProbeEvent({ ...probe, type: 'com.nodeclaim-azure.kubernetes.nodeclaim.added' })).toBe(
      false,
    );
  });

  it('the queue trigger drops it with a debug line, touching nothing', async () => {
    const lines: string[] = [];
    const log = createLogger({
      component: 'test',
      minLevel: 'debug',
      sink: (_level, line) => lines.push(line),
    });
    // Any use of a dependency would throw: the probe must reach no phase.
    const deps = new Proxy({} as LifecycleDependencies, {
      get: (_target, property) => {
        throw new Error(`the probe touched deps.${String(property)}`);
      },
    });
    const context = { log, invocationId: 'i1', orchestrations: undefined } as unknown as Pick<
      HandlerContext,
      'orchestrations' | 'invocationId' | 'log'
    >;
    await expect(handleObjectEvent(deps, JSON.stringify(probe), context)).resolves.toBeUndefined();
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
      expect.objectContaining({
        level: 'debug',
        message: 'bridge readiness probe; nothing to do',
        eventId: 'p1',
      }),
    ]);
  });
});

describe('a refused send', () => {
  it('is one error line naming the data action and the role, and the queue counts as unreachable', async () => {
    const refusing: QueueSink = {
      send: () =>
        Promise.reject(
          new QueuePermissionError('events', 'AuthorizationPermissionMismatch', { cause: undefined }),
        ),
      probe: () =>
        Promise.reject(
          new QueuePermissionError('events', 'AuthorizationPermissionMismatch', { cause: undefined }),
        ),
    };
    const lines: { level: string; line: string }[] = [];
    const publisher = new QueuePublisher({
      buffer: new ChangeBuffer({ capacity: 10, newEventId: () => 'e', now: Date.now }),
      sink: refusing,
      render: () => '{}',
      concurrency: 1,
      backoff: { initialMs: 60_000, maxMs: 60_000, factor: 2, jitter: 0 },
      probeIntervalMs: 60_000,
      logger: createLogger({ component: 'test', sink: (level, line) => lines.push({ level, line }) }),
    });
    publisher.start();
    for (let i = 0; i < 100 && lines.length === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 5));
    publisher.stop();
    expect(lines).toHaveLength(1);
    expect(lines[0]?.level).toBe('error');
    const record = JSON.parse(lines[0]?.line ?? '{}') as { message: string; missingDataAction: string };
    expect(record.missingDataAction).toBe(SEND_DATA_ACTION);
    expect(record.message).toContain(`it needs the data action ${SEND_DATA_ACTION} on that queue`);
    expect(record.message).toContain('grant the role "Storage Queue Data Message Sender" on the queue');
    expect(publisher.queueReachable(60_000)).toBe(false);
  });
});
