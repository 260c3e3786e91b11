// The provisioning workflow's functions as the app registers them (functions/provisioning.ts): the
// window's solve taken from appDefinitions by its name and run on the in-memory fakes with the
// emulator's SKU catalog, and the batcher replayed against histories this test writes (signals raised,
// idle and maximum timers fired), asserting when it closes a window and what it hands the next one. A
// solve that keeps failing is driven through its Durable retry policy on the local host's engine, which
// implements the retries' timers as the Durable Task framework does. The solve itself in depth is
// test/unit/lifecycle/provisioning.test.ts.
import type { V1Pod } from '@kubernetes/client-node';
import { beforeEach, describe, expect, test } from 'vitest';
import { skuCatalog } from '../../../local/arm-emulator/sku-catalog.js';
import type { SkuRecord } from '../../../shared/decisions/offerings.js';
import { WellKnown, type NodePool } from '../../../shared/models/karpenter.js';
import { ProvisioningNames } from '../../../shared/runtime/function-names.js';
import { appFunctions, type AppFunctions } from '../../support/app-functions.js';
import { FAKE_NOW, fakeLifecycle, type FakeLifecycle } from '../../support/fake-lifecycle.js';
import { nodeClass, nodeClassRef } from '../../support/fixtures.js';
import { covers } from '../../support/function-coverage.js';
import {
  replayOrchestration,
  type PendingAction,
  type Responder,
} from '../../support/orchestrator-replay.js';
import { startVirtualDurableEngine } from '../../support/virtual-durable-engine.js';

const pool: NodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'general', uid: 'uid-general' },
  spec: {
    template: {
      spec: {
        nodeClassRef: nodeClassRef('default'),
        requirements: [
          { key: WellKnown.capacityTypeLabel, operator: 'In', values: ['on-demand'] },
          { key: 'karpenter.azure.com/sku-family', operator: 'In', values: ['D'] },
        ],
      },
    },
  },
};

/** A pod kube-scheduler marked Unschedulable, of a ReplicaSet. */
function pendingPod(name: string): V1Pod {
  return {
    metadata: {
      name,
      namespace: 'apps',
      uid: `uid-${name}`,
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs', controller: true },
      ],
    },
    spec: { containers: [{ name: 'app', resources: { requests: { cpu: '500m', memory: '256Mi' } } }] },
    status: {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }],
    },
  };
}

interface Report {
  windowId: string;
  pods: number;
  created: string[];
  onExisting: number;
}

let fake: FakeLifecycle;
let app: AppFunctions;
beforeEach(() => {
  fake = fakeLifecycle();
  app = appFunctions(fake);
  fake.skus.push(...(skuCatalog as unknown as SkuRecord[]));
  fake.nodePools.seed(pool);
  fake.nodeClasses.seed(nodeClass('default', 'Ubuntu2204'));
});

describe(covers(ProvisioningNames.activity), () => {
  test('solves the window’s provisionable pods into a NodeClaim of the NodePool', async () => {
    fake.pods.seed(pendingPod('web-1'));
    fake.pods.seed(pendingPod('web-2'));

    const report = await app.value<Report>(ProvisioningNames.activity, { windowId: 'w1', signals: 2 });

    expect(report).toMatchObject({ windowId: 'w1', pods: 2 });
    expect(report.created).toHaveLength(1);
    const [created] = await fake.nodeClaims.list();
    expect(created?.metadata.name).toBe(report.created[0]);
    expect(created?.metadata.labels?.[WellKnown.nodePoolLabel]).toBe('general');
  });

  test('the same window again (a retried activity) creates nothing more', async () => {
    fake.pods.seed(pendingPod('web-1'));
    await app.value(ProvisioningNames.activity, { windowId: 'w1', signals: 1 });

    const again = await app.value<Report>(ProvisioningNames.activity, { windowId: 'w1', signals: 1 });

    expect(again).toMatchObject({ created: [], onExisting: 1 });
    expect(await fake.nodeClaims.list()).toHaveLength(1);
  });

  test('a read that fails fails the activity, for the batcher’s retry policy (no outage tag)', async () => {
    fake.deps.provisioningReads = {
      ...fake.deps.provisioningReads,
      pods: () => Promise.reject(new Error('connect ECONNREFUSED')),
    };

    await expect(app.raw(ProvisioningNames.activity, { windowId: 'w1', signals: 1 })).rejects.toThrow(
      'ECONNREFUSED',
    );
    expect(fake.nodeClaims.writes).toEqual([]);
  });
});

describe(covers(ProvisioningNames.orchestration), () => {
  const at = (ms: number) => new Date(FAKE_NOW.getTime() + ms);
  const report = { windowId: 'x', pods: 2, created: ['general-abc'], onExisting: 0 };

  /**
   * Signals raised at the given times (ms after start), the newest idle timer fired when no signal
   * comes before it, and the solve answered with `report`.
   */
  function batcher(signalsAt: number[]): Responder {
    const signals = [...signalsAt];
    return (pending) => {
      const event = pending.findLast((p) => p.action.kind === 'externalEvent');
      const timer = pending.findLast(
        (p): p is PendingAction & { action: { kind: 'timer'; fireAt: Date } } => p.action.kind === 'timer',
      );
      const solve = pending.find((p) => p.action.kind === 'activity');
      if (solve) return { to: solve, answer: { result: report } };
      const next = signals[0];
      if (event && next !== undefined && (!timer || at(next) < timer.action.fireAt)) {
        signals.shift();
        return { to: event, answer: { raise: null, at: at(next) } };
      }
      return timer ? { to: timer, answer: { fire: true } } : undefined;
    };
  }
  const replay = (input: { idleMs: number; maxMs: number }, respond: Responder) =>
    replayOrchestration({
      name: ProvisioningNames.orchestration,
      handler: app.orchestration(ProvisioningNames.orchestration).handler,
      instanceId: ProvisioningNames.instanceId,
      input,
      start: FAKE_NOW,
      respond,
    });

  test('waits for a first signal before it opens a window', async () => {
    const run = await replay({ idleMs: 5_000, maxMs: 20_000 }, batcher([]));

    expect(run.result).toMatchObject({ status: 'running', customStatus: { state: 'waiting' } });
    expect(run.pending.map((p) => p.action)).toEqual([
      { kind: 'externalEvent', name: ProvisioningNames.podEvent },
    ]);
  });

  test('every signal restarts the idle timer; the window closes idle, solves once, and continues as new', async () => {
    const run = await replay({ idleMs: 5_000, maxMs: 20_000 }, batcher([1_000, 3_000, 6_000]));

    const timers = run.scheduled.filter((a) => a.kind === 'timer').map((a) => a.kind === 'timer' && a.fireAt);
    expect(timers).toEqual([at(6_000), at(8_000), at(11_000)]);
    const solve = run.answered.find((a) => a.name === ProvisioningNames.activity);
    expect(solve).toMatchObject({
      at: at(11_000),
      input: { windowId: `w${at(1_000).getTime().toString(36)}`, signals: 3 },
    });
    expect(run.result.status).toBe('continuedAsNew');
    expect(run.result.status === 'continuedAsNew' && JSON.parse(run.result.input ?? '{}')).toEqual({
      idleMs: 5_000,
      maxMs: 20_000,
      lastWindow: report,
    });
  });

  test('signals that keep coming cannot hold a window open past its maximum', async () => {
    const run = await replay({ idleMs: 5_000, maxMs: 8_000 }, batcher([0, 3_000, 6_000, 7_500, 9_000]));

    const timers = run.scheduled.filter((a) => a.kind === 'timer').map((a) => a.kind === 'timer' && a.fireAt);
    // The idle timer is cut to the window's maximum (8 s after it opened) once that comes first.
    expect(timers).toEqual([at(5_000), at(8_000), at(8_000), at(8_000)]);
    expect(run.answered.find((a) => a.name === ProvisioningNames.activity)).toMatchObject({
      at: at(8_000),
      input: { signals: 4 },
    });
    expect(run.result.status).toBe('continuedAsNew');
  });

  test('a solve that keeps failing is retried by its policy, then the window is given up', async () => {
    let solves = 0;
    fake.pods.seed(pendingPod('web-1'));
    fake.deps.provisioningReads = {
      ...fake.deps.provisioningReads,
      pods: () => {
        solves += 1;
        return Promise.reject(new Error('connect ECONNREFUSED'));
      },
    };
    const engine = await startVirtualDurableEngine(app.definitions, FAKE_NOW);
    try {
      await engine.client.startNew(ProvisioningNames.orchestration, {
        instanceId: ProvisioningNames.instanceId,
        input: { idleMs: 1_000, maxMs: 10_000, lastWindow: report },
      });
      await engine.runUntil(FAKE_NOW.getTime());
      await engine.client.raiseEvent(ProvisioningNames.instanceId, ProvisioningNames.podEvent);
      await engine.runUntil(FAKE_NOW.getTime() + 60_000);

      const status = await engine.client.getStatus(ProvisioningNames.instanceId);
      expect(solves).toBe(3);
      expect(fake.nodeClaims.writes).toEqual([]);
      // Continued as new, waiting for the next signal, still showing the last window that worked.
      expect(status).toMatchObject({
        runtimeStatus: 'Running',
        customStatus: { state: 'waiting', lastWindow: report },
      });
      expect(engine.events.filter((e) => e.type === 'orchestration.continuedAsNew')).toHaveLength(1);
    } finally {
      await engine.stop();
    }
  });
});

describe(covers(ProvisioningNames.orchestrationV2), () => {
  const at = (ms: number) => new Date(FAKE_NOW.getTime() + ms);
  const report = { windowId: 'x', pods: 2, created: ['general-abc'], onExisting: 0 };

  /** Signals raised at the given times (ms after start), the one idle timer fired when it comes first. */
  function batcher(signalsAt: number[]): Responder {
    const signals = [...signalsAt];
    return (pending) => {
      const event = pending.findLast((p) => p.action.kind === 'externalEvent');
      const timer = pending.findLast(
        (p): p is PendingAction & { action: { kind: 'timer'; fireAt: Date } } => p.action.kind === 'timer',
      );
      const solve = pending.find((p) => p.action.kind === 'activity');
      if (solve) return { to: solve, answer: { result: report } };
      const next = signals[0];
      if (event && next !== undefined && (!timer || at(next) < timer.action.fireAt)) {
        signals.shift();
        return { to: event, answer: { raise: null, at: at(next) } };
      }
      return timer ? { to: timer, answer: { fire: true } } : undefined;
    };
  }
  const replay = (input: { idleMs: number; maxMs: number }, respond: Responder) =>
    replayOrchestration({
      name: ProvisioningNames.orchestrationV2,
      handler: app.orchestration(ProvisioningNames.orchestrationV2).handler,
      instanceId: ProvisioningNames.instanceId,
      input,
      start: FAKE_NOW,
      respond,
    });
  const timersOf = (run: Awaited<ReturnType<typeof replay>>) =>
    run.scheduled.filter((a) => a.kind === 'timer').map((a) => a.kind === 'timer' && a.fireAt);

  test('waits for a first signal before it opens a window', async () => {
    const run = await replay({ idleMs: 5_000, maxMs: 20_000 }, batcher([]));

    expect(run.result).toMatchObject({ status: 'running', customStatus: { state: 'waiting' } });
  });

  test('a burst of signals keeps one idle timer, set again for the window’s new end when it fires', async () => {
    const signals = Array.from({ length: 10 }, (_, i) => i * 100);
    const run = await replay({ idleMs: 1_000, maxMs: 10_000 }, batcher(signals));

    // Ten signals, two timers: the first due 1 s after the window opened, the second 1 s after the last.
    expect(timersOf(run)).toEqual([at(1_000), at(1_900)]);
    expect(run.answered.find((a) => a.name === ProvisioningNames.activity)).toMatchObject({
      at: at(1_900),
      input: { windowId: `w${at(0).getTime().toString(36)}`, signals: 10 },
    });
    expect(run.result.status === 'continuedAsNew' && JSON.parse(run.result.input ?? '{}')).toEqual({
      idleMs: 1_000,
      maxMs: 10_000,
      lastWindow: report,
    });
  });

  test('closes idle after the last signal, as the first version does', async () => {
    const run = await replay({ idleMs: 5_000, maxMs: 20_000 }, batcher([1_000, 3_000, 6_000]));

    expect(timersOf(run)).toEqual([at(6_000), at(8_000), at(11_000)]);
    expect(run.answered.find((a) => a.name === ProvisioningNames.activity)).toMatchObject({
      at: at(11_000),
      input: { signals: 3 },
    });
  });

  test('signals that keep coming cannot hold a window open past its maximum', async () => {
    const run = await replay({ idleMs: 5_000, maxMs: 8_000 }, batcher([0, 3_000, 6_000, 7_500, 9_000]));

    expect(timersOf(run)).toEqual([at(5_000), at(8_000)]);
    expect(run.answered.find((a) => a.name === ProvisioningNames.activity)).toMatchObject({
      at: at(8_000),
      input: { signals: 4 },
    });
  });

  test('a collecting window shows when it last heard a signal, for the signallers', async () => {
    const run = await replay({ idleMs: 5_000, maxMs: 20_000 }, (pending) => {
      const event = pending.findLast((p) => p.action.kind === 'externalEvent');
      return event && pending.length === 1
        ? { to: event, answer: { raise: null, at: at(2_000) } }
        : undefined;
    });

    expect(run.result).toMatchObject({
      status: 'running',
      customStatus: { state: 'collecting', signals: 1, lastSignalAt: at(2_000).toISOString() },
    });
  });
});
