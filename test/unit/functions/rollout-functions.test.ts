// The rollout workflow's functions as the app registers them (functions/rollout.ts): begin and poll run
// on the in-memory fakes (a NodePool of six drifted nodes, its class, Nodes and pods), each answering
// what the orchestrator needs and writing the rollout's state on the NodePool, and the orchestrator
// replayed against histories this test writes. Its history bound over continue-as-new is
// test/unit/lifecycle/rollout-history.test.ts.
import type { V1Pod } from '@kubernetes/client-node';
import { beforeEach, describe, expect, test } from 'vitest';
import {
  RolloutAnnotations,
  rolloutStateOf,
  rolloutTargetOf,
  serializeRolloutState,
  type RolloutState,
} from '../../../shared/decisions/rollout.js';
import type { AKSNodeClass } from '../../../shared/models/aks-node-class.js';
import { ConditionTypes, type NodeClaim, type NodePool } from '../../../shared/models/karpenter.js';
import { RolloutNames } from '../../../shared/runtime/function-names.js';
import type { RolloutInput } from '../../../shared/lifecycle/disruption/rollout/rollout-workflow.js';
import { appFunctions, type AppFunctions } from '../../support/app-functions.js';
import { FakeApiError } from '../../support/fake-api-error.js';
import { FAKE_NOW, fakeLifecycle, type FakeLifecycle } from '../../support/fake-lifecycle.js';
import { nodeClass, nodePool } from '../../support/fixtures.js';
import { covers } from '../../support/function-coverage.js';
import { driftedNodeClaim, initializedNodeClaim, nodeOf } from '../../support/method-pass.js';
import { replayOrchestration, sequential } from '../../support/orchestrator-replay.js';

/** Every step answers when it judged the rollout: the fake's clock. */
const JUDGED_AT = FAKE_NOW.toISOString();

const pool: NodePool = {
  ...nodePool('general', 'default', { budgets: [{ nodes: '2' }] }),
  metadata: { name: 'general', uid: 'pool-uid' },
};
const cls = nodeClass('default', 'Ubuntu2204');
const target = rolloutTargetOf(pool, cls);
const input = { nodePool: { name: 'general', uid: 'pool-uid' }, target: target.id, pollSeconds: 10 };
const minutesAgo = (minutes: number) => new Date(FAKE_NOW.getTime() - minutes * 60_000).toISOString();
const image = (version: string) =>
  `/CommunityGalleries/AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2/images/2204gen2containerd/versions/${version}`;

function state(overrides: Partial<RolloutState> = {}): RolloutState {
  return {
    target: target.id,
    spec: target.spec,
    phase: 'canary',
    wave: 1,
    floor: 5,
    startedAt: minutesAgo(20),
    gatesFrom: minutesAgo(20),
    waveStartedAt: minutesAgo(20),
    ...overrides,
  };
}

let fake: FakeLifecycle;
let app: AppFunctions;

/** The pool, its class and `drifted` drifted NodeClaims with Ready Nodes, plus `fresh` replacements. */
function seed(options: { drifted?: number; fresh?: number; state?: RolloutState; cls?: AKSNodeClass } = {}) {
  const annotations: Record<string, string> = options.state
    ? { [RolloutAnnotations.state]: serializeRolloutState(options.state) }
    : {};
  fake.nodePools.seed({ ...pool, metadata: { ...pool.metadata, annotations } });
  fake.nodeClasses.seed(options.cls ?? cls);
  const claims: NodeClaim[] = [];
  for (let i = 0; i < (options.drifted ?? 6); i++) claims.push(driftedNodeClaim(`old-${i}`, pool, 30 + i));
  for (let i = 0; i < (options.fresh ?? 0); i++) {
    claims.push(initializedNodeClaim(`new-${i}`, pool, { creationTimestamp: minutesAgo(10) }));
  }
  for (const claim of claims) {
    fake.nodeClaims.seed(claim);
    fake.nodes.seed(nodeOf(claim));
  }
  return claims;
}

const stored = () => rolloutStateOf(fake.nodePools.peek('general')!);
const reasons = () => fake.events.map((e) => [e.type, e.target.kind, e.reason]);
const useSettings = (rollout: Partial<FakeLifecycle['deps']['settings']['rollout']>) => {
  fake.deps.settings = { ...fake.deps.settings, rollout: { ...fake.deps.settings.rollout, ...rollout } };
};

function pod(nodeName: string, name: string, ready: boolean, scheduledMinutesAgo: number): V1Pod {
  const at = new Date(minutesAgo(scheduledMinutesAgo));
  return {
    metadata: { namespace: 'apps', name },
    spec: { nodeName, containers: [{ name: 'app', image: 'app:2' }] },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'PodScheduled', status: 'True', lastTransitionTime: at },
        { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: at },
      ],
      containerStatuses: [],
    },
  };
}

beforeEach(() => {
  fake = fakeLifecycle();
  app = appFunctions(fake);
});

describe(covers(RolloutNames.begin), () => {
  test('starts the canary: the state with its floor on the NodePool, RolloutStarted, a wave counted', async () => {
    seed();

    expect(await app.value(RolloutNames.begin, input)).toEqual({ judgedAt: JUDGED_AT });
    expect(stored()).toEqual({
      target: target.id,
      spec: target.spec,
      phase: 'canary',
      wave: 1,
      floor: 5,
      startedAt: FAKE_NOW.toISOString(),
      gatesFrom: FAKE_NOW.toISOString(),
      waveStartedAt: FAKE_NOW.toISOString(),
    });
    expect(reasons()).toEqual([['Normal', 'NodePool', 'RolloutStarted']]);
    expect(fake.deps.metrics.total('karpenter_nodepools_rollout_waves_total', { nodepool: 'general' })).toBe(
      1,
    );
  });

  test('a rollout already under way is carried on: nothing written', async () => {
    seed({ state: state({ phase: 'waves', wave: 3, floor: 1 }) });

    // Nothing changed and no soak runs: the next poll may wait longer.
    expect(await app.value(RolloutNames.begin, input)).toEqual({ judgedAt: JUDGED_AT, quiet: true });
    expect(fake.nodePools.writes).toEqual([]);
  });

  test('a NodePool recreated under the name is gone; a newer target supersedes', async () => {
    seed();
    expect(
      await app.value(RolloutNames.begin, { ...input, nodePool: { name: 'general', uid: 'other' } }),
    ).toEqual({
      ended: 'gone',
    });
    expect(await app.value(RolloutNames.begin, { ...input, target: 'older' })).toEqual({
      ended: 'superseded',
    });
    expect(fake.nodePools.writes).toEqual([]);
  });

  test('resumes a halted rollout named by the resume annotation, and removes the annotation', async () => {
    seed({ drifted: 4, fresh: 2, state: state({ phase: 'halted', wave: 1, floor: 5 }) });
    const halted = fake.nodePools.peek('general')!;
    fake.nodePools.seed({
      ...halted,
      metadata: {
        ...halted.metadata,
        annotations: { ...halted.metadata.annotations, [RolloutAnnotations.resume]: target.id },
      },
    });

    expect(await app.value(RolloutNames.begin, input)).toEqual({ judgedAt: JUDGED_AT });
    expect(stored()).toMatchObject({ phase: 'waves', wave: 2, floor: 2, gatesFrom: FAKE_NOW.toISOString() });
    expect(fake.nodePools.peek('general')?.metadata.annotations?.[RolloutAnnotations.resume]).toBeUndefined();
  });

  test('the API server away: transient, and the workflow calls again', async () => {
    seed();
    fake.nodePools.get = () => Promise.reject(new FakeApiError(503, 'unavailable'));

    expect(await app.call(RolloutNames.begin, input)).toEqual({ transient: 'unavailable' });
  });
});

describe(covers(RolloutNames.poll), () => {
  test('the canary replaced: the soak starts; after it, the next wave at the budget', async () => {
    seed({ drifted: 5, fresh: 1, state: state() });

    expect(await app.value(RolloutNames.poll, input)).toEqual({ judgedAt: JUDGED_AT });
    expect(stored()).toMatchObject({ phase: 'canary', soakingSince: FAKE_NOW.toISOString() });

    useSettings({ soakSeconds: 0 });
    expect(await app.value(RolloutNames.poll, input)).toEqual({ judgedAt: JUDGED_AT });
    expect(stored()).toMatchObject({ phase: 'waves', wave: 2, floor: 3 });
    expect(stored()?.soakingSince).toBeUndefined();
    expect(reasons()).toEqual([['Normal', 'NodePool', 'RolloutWaveStarted']]);
  });

  test('every node replaced and soaked: rolled out, RolloutSucceeded, the outcome counted, ended', async () => {
    seed({ drifted: 0, fresh: 6, state: state({ phase: 'waves', wave: 4, floor: 0 }) });
    useSettings({ soakSeconds: 0 });

    expect(await app.value(RolloutNames.poll, input)).toEqual({ ended: 'rolled_out' });
    expect(stored()?.phase).toBe('rolledOut');
    expect(reasons()).toEqual([['Normal', 'NodePool', 'RolloutSucceeded']]);
    expect(
      fake.deps.metrics.total('karpenter_nodepools_rollouts_total', {
        nodepool: 'general',
        outcome: 'rolled_out',
      }),
    ).toBe(1);
  });

  test('a pod on the canary not Ready in time halts a spec change: the gate in the state, a Warning', async () => {
    seed({ drifted: 5, fresh: 1, state: state() });
    fake.pods.seed(pod('aks-new-0', 'web', false, 8));
    fake.pods.seed(pod('aks-old-0', 'web-old', true, 60));

    expect(await app.value(RolloutNames.poll, input)).toEqual({ ended: 'halted' });
    expect(stored()).toMatchObject({ phase: 'halted', gate: { name: 'PodNotReady' } });
    expect(stored()?.gate?.message).toContain('pod apps/web on Node aks-new-0 is not Ready 480 s after');
    expect(reasons()).toEqual([['Warning', 'NodePool', 'RolloutGateFailed']]);
    expect(
      fake.deps.metrics.total('karpenter_nodepools_rollout_gate_failures_total', {
        nodepool: 'general',
        gate: 'pod_not_ready',
      }),
    ).toBe(1);
    expect(
      fake.deps.metrics.total('karpenter_nodepools_rollouts_total', {
        nodepool: 'general',
        outcome: 'halted',
      }),
    ).toBe(1);
  });

  test('a failed image version change is rolled back: the version on the class, then the state waits for its nodes', async () => {
    const newer: AKSNodeClass = {
      ...cls,
      status: { images: [{ id: image('202612.01.0'), requirements: [] }] },
    };
    const imageTarget = rolloutTargetOf(pool, newer);
    const claims = seed({
      drifted: 5,
      fresh: 1,
      cls: newer,
      state: state({ target: imageTarget.id, spec: imageTarget.spec }),
    });
    for (const claim of claims) {
      const canary = claim.metadata.name.startsWith('new');
      fake.nodeClaims.seed({
        ...claim,
        status: {
          ...claim.status,
          imageID: image(canary ? '202612.01.0' : '202611.01.0'),
          conditions: (claim.status?.conditions ?? []).map((c) =>
            c.type === ConditionTypes.drifted ? { ...c, reason: 'ImageDrift' } : c,
          ),
        },
      });
      if (canary) fake.nodes.seed(nodeOf(claim, { ready: 'Unknown' }));
    }
    const imageInput = { ...input, target: imageTarget.id };

    expect(await app.value(RolloutNames.poll, imageInput)).toEqual({ judgedAt: JUDGED_AT });
    expect(stored()).toMatchObject({
      phase: 'rollback',
      rejectedImageVersion: '202612.01.0',
      gate: { name: 'NodeUnhealthy' },
    });
    const rolledBack = (fake.nodeClasses.peek('default')?.status as { rolledBackVersions?: unknown[] })
      .rolledBackVersions;
    expect(rolledBack).toEqual([
      {
        imageVersion: '202612.01.0',
        reason: expect.stringContaining('NodeUnhealthy: Node aks-new-0 was Ready and is now Ready=Unknown'),
        nodePool: 'general',
        timestamp: FAKE_NOW.toISOString(),
      },
    ]);
    expect(reasons()).toEqual([
      ['Warning', 'NodePool', 'RolloutGateFailed'],
      ['Warning', 'NodePool', 'RolloutRolledBack'],
    ]);

    // The canary still runs the version: nothing more is written.
    const writes = fake.nodePools.writes.length + fake.nodeClasses.writes.length;
    expect(await app.value(RolloutNames.poll, imageInput)).toEqual({ judgedAt: JUDGED_AT });
    expect(fake.nodePools.writes.length + fake.nodeClasses.writes.length).toBe(writes);

    // Once no node runs it: rolled back, under the class's target as it is now.
    const canary = fake.nodeClaims.peek('new-0')!;
    fake.nodeClaims.seed({ ...canary, metadata: { ...canary.metadata, finalizers: [] } });
    await fake.nodeClaims.delete('new-0');
    expect(await app.value(RolloutNames.poll, imageInput)).toEqual({ ended: 'rolled_back' });
    expect(stored()).toMatchObject({ phase: 'rolledBack', target: imageTarget.id });
  });

  test('paused: nothing judged, nothing written', async () => {
    seed({ drifted: 5, fresh: 1, state: state() });
    const current = fake.nodePools.peek('general')!;
    fake.nodePools.seed({
      ...current,
      metadata: {
        ...current.metadata,
        annotations: { ...current.metadata.annotations, [RolloutAnnotations.paused]: 'true' },
      },
    });
    fake.pods.seed(pod('aks-new-0', 'web', false, 8));

    expect(await app.value(RolloutNames.poll, input)).toEqual({ judgedAt: JUDGED_AT, quiet: true });
    expect(fake.nodePools.writes).toEqual([]);
  });
});

describe(covers(RolloutNames.orchestration), () => {
  const replay = (respond: Parameters<typeof sequential>[0]) =>
    replayOrchestration({
      name: RolloutNames.orchestration,
      handler: app.orchestration(RolloutNames.orchestration).handler,
      instanceId: `rollout-pool-uid-${target.id}`,
      input,
      start: FAKE_NOW,
      respond: sequential(respond),
    });
  const seconds = (at: Date) => (at.getTime() - FAKE_NOW.getTime()) / 1000;

  test('begin, then a poll every pollSeconds until one says the rollout ended', async () => {
    const run = await replay((name, _input, call) => {
      if (name === RolloutNames.begin) return { result: {} };
      if (name === RolloutNames.poll) return { result: call < 3 ? {} : { ended: 'rolled_out' } };
      return undefined;
    });

    expect(run.result).toMatchObject({ status: 'completed', output: { outcome: 'rolled_out' } });
    expect(run.answered.map((a) => [a.name, seconds(a.at)])).toEqual([
      [RolloutNames.begin, 0],
      ['timer', 10],
      [RolloutNames.poll, 10],
      ['timer', 20],
      [RolloutNames.poll, 20],
      ['timer', 30],
      [RolloutNames.poll, 30],
    ]);
    // Each poll says when the previous answer came (the begin's at 0, then each poll's), so it can tell
    // whether the gates went unjudged in between; otherwise the workflow's input.
    const polls = run.answered.filter((a) => a.name === RolloutNames.poll);
    expect(polls.map((a) => seconds(new Date((a.input as RolloutInput).answeredAt ?? '')))).toEqual([
      0, 10, 20,
    ]);
    expect(
      run.answered.every(
        (a) =>
          a.name === 'timer' ||
          JSON.stringify({
            ...(a.input as RolloutInput),
            answeredAt: undefined,
            waitedSeconds: undefined,
          }) === JSON.stringify(input),
      ),
    ).toBe(true);
  });

  test('quiet polls back off, doubling up to four intervals; a poll that changed something resets it', async () => {
    const run = await replay((name, _input, call) => {
      if (name === RolloutNames.begin) return { result: {} };
      if (name !== RolloutNames.poll) return undefined;
      if (call <= 4) return { result: { quiet: true } };
      if (call === 5) return { result: {} };
      return { result: { ended: 'rolled_out' } };
    });

    expect(run.result).toMatchObject({ status: 'completed', output: { outcome: 'rolled_out' } });
    const polls = run.answered.filter((a) => a.name === RolloutNames.poll);
    // 10, then 20 (after one quiet), 40, 40 (the cap), then 40 again before the poll that changed
    // something, after which the wait is one interval.
    expect(polls.map((a) => seconds(a.at))).toEqual([10, 30, 70, 110, 150, 160]);
    expect(polls.map((a) => (a.input as RolloutInput).waitedSeconds)).toEqual([10, 20, 40, 40, 40, 10]);
  });

  test('a begin that ends the rollout (superseded, nothing drifted) ends the workflow at once', async () => {
    const run = await replay((name) =>
      name === RolloutNames.begin ? { result: { ended: 'superseded' } } : undefined,
    );

    expect(run.result).toMatchObject({ status: 'completed', output: { outcome: 'superseded' } });
    expect(run.answered.map((a) => a.name)).toEqual([RolloutNames.begin]);
  });
});
