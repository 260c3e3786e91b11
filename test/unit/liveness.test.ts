import { describe, expect, it } from 'vitest';
import { formatDuration, livenessDecision } from '../../shared/decisions/liveness.js';
import { condition, nodeClaim } from './registration-fixtures.js';

const TIMEOUT = 15 * 60 * 1000;
const LAUNCHED_AT = '2025-01-01T00:00:00.000Z';
const at = (offsetMs: number) => new Date(Date.parse(LAUNCHED_AT) + offsetMs);
const options = { registrationTimeoutMs: TIMEOUT };

describe('livenessDecision', () => {
  const launched = nodeClaim({
    creationTimestamp: '2024-12-31T23:55:00.000Z',
    conditions: [
      condition('Launched', 'True', 'Launched', LAUNCHED_AT),
      condition('Registered', 'Unknown', 'NodeNotFound'),
    ],
  });

  it.each([
    { name: 'just launched', offset: 0, action: 'none' },
    { name: 'one millisecond before the deadline', offset: TIMEOUT - 1, action: 'none' },
    { name: 'exactly at the deadline', offset: TIMEOUT, action: 'delete' },
    { name: 'long after the deadline', offset: 10 * TIMEOUT, action: 'delete' },
  ])('launched, not registered, $name → $action', ({ offset, action }) => {
    expect(livenessDecision(launched, at(offset), options).action).toBe(action);
  });

  it('says when to look again while waiting', () => {
    expect(livenessDecision(launched, at(60_000), options)).toEqual({
      action: 'none',
      nextCheckAt: at(TIMEOUT),
    });
  });

  it('explains the deletion', () => {
    const decision = livenessDecision(launched, at(TIMEOUT), options);
    expect(decision).toMatchObject({ action: 'delete', reason: 'RegistrationTimeout' });
    if (decision.action === 'delete') expect(decision.message).toContain('15m');
  });

  it('honours a configured timeout', () => {
    expect(livenessDecision(launched, at(61_000), { registrationTimeoutMs: 60_000 }).action).toBe('delete');
    expect(livenessDecision(launched, at(59_000), { registrationTimeoutMs: 60_000 }).action).toBe('none');
  });

  it('measures from creation when there is a provider ID but no Launched condition yet', () => {
    const claim = nodeClaim({ creationTimestamp: LAUNCHED_AT });
    expect(livenessDecision(claim, at(TIMEOUT - 1), options)).toEqual({
      action: 'none',
      nextCheckAt: at(TIMEOUT),
    });
    expect(livenessDecision(claim, at(TIMEOUT), options).action).toBe('delete');
  });

  it('restarts the clock when Launched transitions (slow LRO finished)', () => {
    const slowLaunch = nodeClaim({
      creationTimestamp: '2024-12-31T23:40:00.000Z',
      conditions: [condition('Launched', 'True', 'Launched', LAUNCHED_AT)],
    });
    expect(livenessDecision(slowLaunch, at(TIMEOUT - 1), options).action).toBe('none');
  });

  it.each([
    {
      name: 'already registered',
      claim: nodeClaim({
        creationTimestamp: LAUNCHED_AT,
        conditions: [condition('Launched', 'True', 'Launched', LAUNCHED_AT), condition('Registered', 'True')],
      }),
    },
    {
      name: 'not launched (no provider ID, no Launched condition)',
      claim: nodeClaim({ providerID: null, creationTimestamp: LAUNCHED_AT }),
    },
    {
      name: 'already being deleted',
      claim: nodeClaim({ creationTimestamp: LAUNCHED_AT, deletionTimestamp: at(TIMEOUT).toISOString() }),
    },
    { name: 'no timestamp to measure from', claim: nodeClaim({}) },
  ])('$name → none, with nothing to wait for', ({ claim }) => {
    expect(livenessDecision(claim, at(10 * TIMEOUT), options)).toEqual({ action: 'none' });
  });

  it('applies to a NodeClaim whose Registered condition is False (MultipleNodesFound)', () => {
    const claim = nodeClaim({
      conditions: [
        condition('Launched', 'True', 'Launched', LAUNCHED_AT),
        condition('Registered', 'False', 'MultipleNodesFound'),
      ],
    });
    expect(livenessDecision(claim, at(TIMEOUT), options).action).toBe('delete');
  });

  it('counts a Launched condition without a provider ID as launched', () => {
    const claim = nodeClaim({
      providerID: null,
      conditions: [condition('Launched', 'Unknown', 'LaunchInProgress', LAUNCHED_AT)],
    });
    expect(livenessDecision(claim, at(TIMEOUT), options).action).toBe('delete');
  });
});

describe('formatDuration', () => {
  it.each([
    [15 * 60 * 1000, '15m'],
    [90_000, '1m30s'],
    [3_600_000 + 5_000, '1h5s'],
    [0, '0s'],
  ])('%d ms → %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
