// The Durable group's line of `npm run cost` counts the orchestrations that ship: the second versions'
// executions per launch, derived from the measured actions (6 at 30 s VM creation, 10 at 90 s), with their
// waits inside one activity billed as the execution time they are, shared by an instance's activity slots
// only when the launch rate makes them overlap. Were the model to go back to the first versions' shape
// (about 60 short executions a launch) or to bill a wait as a short execution, these fail.
import { describe, expect, it } from 'vitest';
import { MEASURED_ACTIONS_PER_NODECLAIM } from '../../shared/decisions/durable-backend-sizing.js';
import { SECONDS_PER_MONTH } from '../../shared/decisions/flex-cost.js';
import { ACTIVITY_WAIT_WINDOW_SECONDS } from '../../shared/lifecycle/durable/activity-wait.js';
import {
  activitySlotsPerInstance,
  billedSecondsPerNodeClaim,
  DEFAULT_MEASURED_CASE,
  durableLine,
  EXECUTIONS_PER_WINDOW,
  measuredCase,
  nodeClaimExecutions,
  waitPerCall,
  waitShare,
} from '../bench/durable-executions.js';

const { fastCreation, slowCreation } = MEASURED_ACTIONS_PER_NODECLAIM;
const launchesAtScale = (1000 * 730) / 168;

describe("a NodeClaim in the second versions' shape", () => {
  it('makes as many executions as the bench measured actions, 6 to 10 a launch', () => {
    for (const measured of [fastCreation, slowCreation]) {
      const shape = nodeClaimExecutions(measured);
      expect(shape.executions).toBe(measured.value);
      expect(shape.executions).toBeGreaterThanOrEqual(6);
      expect(shape.executions).toBeLessThanOrEqual(10);
    }
    // A start and one call each at 30 s: 2 + 2 episodes, 2 calls; at 90 s the monitor calls three times.
    expect(nodeClaimExecutions(fastCreation).episodes).toBe(4);
    expect(nodeClaimExecutions(slowCreation).episodes).toBe(6);
  });

  it('waits through the creation and the deletion inside activities, at most a window a call', () => {
    const slow = nodeClaimExecutions(slowCreation);
    expect(slow.waits.map((w) => [w.activity, w.secondsPerCall])).toEqual([
      ['awaitVmCreation', [45, 45, 5]],
      ['advanceNodeClaimTermination', [45]],
    ]);
    expect(slow.waitSeconds).toBe(140);
    expect(nodeClaimExecutions(fastCreation).waits.map((w) => w.secondsPerCall)).toEqual([[35], [45]]);
    for (const wait of slow.waits)
      for (const seconds of wait.secondsPerCall)
        expect(seconds).toBeLessThanOrEqual(ACTIVITY_WAIT_WINDOW_SECONDS);
    // Billed alone: each episode at the 1 s minimum, the last short call too, the waits at their length.
    expect(billedSecondsPerNodeClaim(slow, 1)).toBe(6 + 45 + 45 + 5 + 45);
  });

  it('refuses a measured count that is not a start and whole activity calls, or an orchestration it does not know', () => {
    expect(() =>
      nodeClaimExecutions({
        ...slowCreation,
        byOrchestration: { launchMonitorV2: 8, terminateNodeClaimV2: 3 },
      }),
    ).toThrow(/not a start and whole activity calls/);
    expect(() =>
      nodeClaimExecutions({
        ...slowCreation,
        byOrchestration: { launchMonitor: 48, terminateNodeClaim: 13 },
      }),
    ).toThrow(/does not know/);
    expect(() => waitPerCall(95, 2, 45)).toThrow(/cannot hold/);
  });

  it('bills the 90 s creation by default, and another measured case by its creation time', () => {
    expect(DEFAULT_MEASURED_CASE).toBe(slowCreation);
    expect(measuredCase(undefined)).toBe(slowCreation);
    expect(measuredCase('30')).toBe(fastCreation);
    expect(() => measuredCase('60')).toThrow(/30 and 90 s/);
  });
});

describe('overlapping waits', () => {
  it("share an instance's billed seconds, up to its activity slots, only when they run at once", () => {
    expect(waitShare(0.2, 50)).toBe(1);
    expect(waitShare(1, 50)).toBe(1);
    expect(waitShare(10, 50)).toBeCloseTo(1 / 10, 12);
    expect(waitShare(50, 50)).toBeCloseTo(1 / 50, 12);
    expect(waitShare(100, 50)).toBeCloseTo(2 / 100, 12);
  });

  it('reads the slots from host.json', () => {
    expect(activitySlotsPerInstance()).toBe(50);
    expect(activitySlotsPerInstance('{}')).toBe(10);
  });
});

describe("the Durable group's line at 1,000 nodes", () => {
  const line = durableLine({
    launchesPerMonth: launchesAtScale,
    windowsPerMonth: 2000,
    slotsPerInstance: 50,
  });
  const perLaunch = (line.execution.perMonth - 2000 * EXECUTIONS_PER_WINDOW) / launchesAtScale;

  it("counts 6 to 10 executions a launch, not the first versions' 60", () => {
    expect(perLaunch).toBeCloseTo(10, 10);
    expect(perLaunch).toBeGreaterThanOrEqual(6);
    expect(perLaunch).toBeLessThanOrEqual(10);
    expect(line.execution.name).toContain('10 per launch');
    expect(line.execution.alwaysReady).toBe(true);
  });

  it('bills the waits alone, since launches ten minutes apart never overlap waits of two', () => {
    expect(line.waitsAtOnce).toBeCloseTo((launchesAtScale / SECONDS_PER_MONTH) * 140, 12);
    expect(line.waitsAtOnce).toBeLessThan(1);
    expect(line.share).toBe(1);
    const billed = line.execution.perMonth * line.execution.seconds;
    expect(billed).toBeCloseTo(launchesAtScale * (6 + 140) + 2000 * EXECUTIONS_PER_WINDOW, 6);
    // The waits are most of it: short executions alone would bill 10 s a launch, not 146.
    expect(billed).toBeGreaterThan(launchesAtScale * 140);
  });

  it('shares the waits once the launch rate overlaps them', () => {
    const burst = durableLine({
      launchesPerMonth: launchesAtScale * 100,
      windowsPerMonth: 0,
      slotsPerInstance: 50,
    });
    expect(burst.waitsAtOnce).toBeGreaterThan(10);
    expect(burst.share).toBeCloseTo(1 / burst.waitsAtOnce, 12);
    expect(burst.execution.perMonth * burst.execution.seconds).toBeLessThan(
      launchesAtScale * 100 * (6 + 140),
    );
  });
});
