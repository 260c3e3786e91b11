// The telemetry and storage parts of `npm run cost` follow host.json: the Durable and queue-trigger
// polling intervals are read from the deployed host.json (another setting there changes the bill), and
// the transaction counts scale as the model says with those intervals and with the workload.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hostPolling, storageTransactions, timeSpanSeconds } from '../bench/telemetry-cost.js';

const hostJson = readFileSync(join(import.meta.dirname, '..', '..', 'host.json'), 'utf8');

describe('telemetry cost inputs', () => {
  it('reads TimeSpans as host.json writes them', () => {
    expect(timeSpanSeconds('00:00:30')).toBe(30);
    expect(timeSpanSeconds('00:01:00')).toBe(60);
    expect(timeSpanSeconds('1.02:00:05')).toBe(93_605);
    expect(() => timeSpanSeconds('30s')).toThrow(/TimeSpan/);
  });

  it("reads the deployed host.json's polling, with the hosts' defaults where it sets none", () => {
    const host = JSON.parse(hostJson) as {
      extensions: {
        queues: { maxPollingInterval: string };
        durableTask: { storageProvider: { partitionCount?: number; maxQueuePollingInterval?: string } };
      };
    };
    const polling = hostPolling();
    expect(polling.partitionCount).toBe(host.extensions.durableTask.storageProvider.partitionCount ?? 4);
    expect(polling.queueMaxPollingSeconds).toBe(timeSpanSeconds(host.extensions.queues.maxPollingInterval));
    expect(polling.maxQueuePollingSeconds).toBe(
      timeSpanSeconds(host.extensions.durableTask.storageProvider.maxQueuePollingInterval ?? '00:00:30'),
    );
    expect(hostPolling('{}')).toEqual({
      partitionCount: 4,
      maxQueuePollingSeconds: 30,
      queueMaxPollingSeconds: 60,
    });
    const set = hostPolling(
      JSON.stringify({
        extensions: {
          durableTask: { storageProvider: { partitionCount: 2, maxQueuePollingInterval: '00:00:10' } },
        },
      }),
    );
    expect(set).toMatchObject({ partitionCount: 2, maxQueuePollingSeconds: 10 });
  });

  it('scales idle polling with the interval and the per-orchestration work with the workload', () => {
    const workload = { executions: 0, queueMessages: 1000, durableExecutions: 10_000 };
    const base = { partitionCount: 4, maxQueuePollingSeconds: 30, queueMaxPollingSeconds: 2 };
    const at30 = storageTransactions(base, workload);
    const at60 = storageTransactions({ ...base, maxQueuePollingSeconds: 60 }, workload);
    expect(at60[0]?.usd).toBeCloseTo((at30[0]?.usd ?? 0) / 2, 10);
    expect(at60.slice(1)).toEqual(at30.slice(1));
    const doubled = storageTransactions(base, { ...workload, durableExecutions: 20_000 });
    expect(doubled[4]?.usd).toBeCloseTo((at30[4]?.usd ?? 0) * 2, 10);
    const idle = storageTransactions(base, { executions: 0, queueMessages: 0, durableExecutions: 0 });
    expect(idle[3]?.usd).toBe(0);
    expect(idle[4]?.usd).toBe(0);
    expect(idle[0]?.usd).toBeGreaterThan(0);
  });
});
