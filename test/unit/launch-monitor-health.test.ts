import { describe, expect, test } from 'vitest';
import {
  launchMonitorHealth,
  launchMonitorStuckAfterMs,
} from '../../shared/decisions/launch-monitor-health.js';

const now = new Date('2026-11-30T12:00:00Z');
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);
const stuckAfterMs = 180_000;

describe('launchMonitorHealth', () => {
  test.each([
    { name: 'no instance', status: undefined, state: 'missing' },
    { name: 'Failed', status: { runtimeStatus: 'Failed', lastUpdatedTime: ago(1) }, state: 'ended' },
    { name: 'Terminated', status: { runtimeStatus: 'Terminated', lastUpdatedTime: ago(1) }, state: 'ended' },
    {
      name: 'Completed (outcome never reached the NodeClaim)',
      status: { runtimeStatus: 'Completed' },
      state: 'ended',
    },
    {
      name: 'Running, updated 10 s ago',
      status: { runtimeStatus: 'Running', lastUpdatedTime: ago(10) },
      state: 'healthy',
    },
    {
      name: 'Pending, just created',
      status: { runtimeStatus: 'Pending', createdTime: ago(1) },
      state: 'healthy',
    },
    {
      name: 'Running, silent exactly the limit',
      status: { runtimeStatus: 'Running', lastUpdatedTime: ago(180) },
      state: 'healthy',
    },
    {
      name: 'Running, silent past the limit',
      status: { runtimeStatus: 'Running', lastUpdatedTime: ago(181) },
      state: 'stuck',
    },
    {
      name: 'Pending for too long (never ran)',
      status: { runtimeStatus: 'Pending', createdTime: ago(600) },
      state: 'stuck',
    },
    { name: 'Running without any time', status: { runtimeStatus: 'Running' }, state: 'healthy' },
  ])('$name → $state', ({ status, state }) => {
    expect(launchMonitorHealth(status, now, stuckAfterMs).state).toBe(state);
  });

  test('a stuck monitor reports how long it was silent; an ended one its status', () => {
    expect(
      launchMonitorHealth({ runtimeStatus: 'Running', lastUpdatedTime: ago(200) }, now, stuckAfterMs),
    ).toEqual({
      state: 'stuck',
      silentForMs: 200_000,
    });
    expect(launchMonitorHealth({ runtimeStatus: 'Failed' }, now, stuckAfterMs)).toEqual({
      state: 'ended',
      runtimeStatus: 'Failed',
    });
  });

  test('the silence allowed is three maximum poll intervals, at least two minutes', () => {
    expect(launchMonitorStuckAfterMs(60)).toBe(180_000);
    expect(launchMonitorStuckAfterMs(1)).toBe(120_000);
  });
});
