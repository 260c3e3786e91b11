// The day's decision-record invariant: a pod left unbound past the bound needs a record naming it, and a
// disruption needs a command record with its reason, $/h and pods; outages and pods bound at once need
// none.
import { describe, expect, test } from 'vitest';
import { checkDecisionRecords } from '../../../local/scenarios/day/invariants/decision-records.js';
import type { DecisionRecord, PodDecision } from '../../../shared/decisions/explain/decision-record.js';
import type { DayPod, Version } from '../../../local/scenarios/day/invariants/history.js';
import { history, pod } from './day-history-fixtures.js';

/** The pod as the scheduler leaves one it could not place: PodScheduled=False, Unschedulable. */
const unschedulable = (at: number, name: string): Version<DayPod> => {
  const version = pod(at, name, 'web');
  version.object.status = {
    ...version.object.status,
    conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }],
  };
  return version;
};

const window = (pods: PodDecision[]): DecisionRecord => ({
  kind: 'provisioning',
  id: 'w',
  at: new Date(0).toISOString(),
  pods,
  launches: [],
});

const pass: DecisionRecord = {
  kind: 'disruption',
  id: 'general-1',
  at: new Date(0).toISOString(),
  nodePool: 'general',
  candidates: [],
  commands: [
    {
      method: 'emptiness',
      reason: 'Empty',
      candidates: ['nc-1'],
      replacements: [],
      pricePerHourBefore: 0.1,
      pricePerHourAfter: 0,
      podsMoved: [],
    },
  ],
};

describe('checkDecisionRecords', () => {
  test('a pod Unschedulable for 40 s is named by a record with its cause; one bound in 5 s, or never marked Unschedulable, needs none', () => {
    const day = history({
      pods: [
        pod(0, 'web-1', 'web'),
        unschedulable(1_000, 'web-1'),
        pod(41_000, 'web-1', 'web', { nodeName: 'n1' }),
        unschedulable(0, 'web-2'),
        pod(5_000, 'web-2', 'web', { nodeName: 'n1' }),
        // Still in the scheduler's queue for a minute: nothing for provisioning to explain.
        pod(0, 'web-3', 'web'),
        pod(60_000, 'web-3', 'web', { nodeName: 'n1' }),
      ],
    });
    const records = [
      window([
        {
          pod: 'day/web-1',
          uid: 'u1',
          excluded: [{ nodePool: 'general', cause: 'Limit', message: 'limits' }],
        },
      ]),
    ];
    const checked = checkDecisionRecords(day, records, [], 60_000);
    expect(checked.invariant.holds).toBe(true);
    expect(checked.figures).toMatchObject({ podsWaited: 1, podsWaitedWithRecord: 1, causes: { Limit: 1 } });
  });

  test('a pod that waited with no record, and a disruption with none, are violations', () => {
    const day = history({ pods: [unschedulable(0, 'web-1')] });
    const checked = checkDecisionRecords(
      day,
      [],
      [{ at: 1, name: 'nc-9', pool: 'general', reason: 'Empty' }],
      60_000,
    );
    expect(checked.invariant.holds).toBe(false);
    expect(checked.invariant.violations).toEqual([
      expect.stringContaining('web-1 was Unschedulable 60.0 s'),
      expect.stringContaining('nc-9 (Empty) has no disruption record'),
    ]);
  });

  test('time the cluster could not act is not waiting; a recorded disruption counts', () => {
    const day = history({
      pods: [unschedulable(0, 'web-1'), pod(50_000, 'web-1', 'web', { nodeName: 'n1' })],
      disturbances: [{ from: 0, to: 30_000, what: 'API server down' }],
    });
    const checked = checkDecisionRecords(
      day,
      [pass],
      [{ at: 1, name: 'nc-1', pool: 'general', reason: 'Empty' }],
      60_000,
    );
    expect(checked.invariant.holds).toBe(true);
    expect(checked.figures).toMatchObject({ podsWaited: 0, disruptions: 1, disruptionsWithRecord: 1 });
  });
});
