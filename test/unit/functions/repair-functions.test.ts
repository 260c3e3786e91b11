// The repair workflow's functions as the app registers them (functions/repair.ts): each activity taken
// from appDefinitions by its name and run on the in-memory fakes (an unhealthy NodeClaim, its Node and
// its VM), and the repair orchestrator replayed against histories this test writes: a reboot that
// helps, one that does not and escalates to a replacement, and the spot preemption fast path. Its
// history bound over continue-as-new is repair-history.test.ts.
import { beforeEach, describe, expect, test } from 'vitest';
import { vmNameFor } from '../../../shared/cloudprovider/azure/decisions/vm-spec.js';
import type { Condition, NodeClaim } from '../../../shared/models/index.js';
import { ConditionTypes, WellKnown, type NodePool } from '../../../shared/models/karpenter.js';
import { RepairNames, TerminationNames } from '../../../shared/runtime/function-names.js';
import { appFunctions, type AppFunctions } from '../../support/app-functions.js';
import { FakeApiError } from '../../support/fake-api-error.js';
import { FAKE_NOW, fakeLifecycle, type FakeLifecycle } from '../../support/fake-lifecycle.js';
import { nodeClass, nodePool } from '../../support/fixtures.js';
import { covers } from '../../support/function-coverage.js';
import { initializedNodeClaim, nodeOf } from '../../support/method-pass.js';
import { d2sV5Offering, d2sV5Sku } from '../../support/offering.js';
import { replayOrchestration, sequential } from '../../support/orchestrator-replay.js';

const pool: NodePool = { ...nodePool('general', 'default'), metadata: { name: 'general', uid: 'pool-uid' } };
const NAME = 'general-a';
const VM = vmNameFor(NAME);
const NODE = `aks-${NAME}`;
const policy = {
  conditionType: 'Ready',
  conditionStatus: 'False',
  tolerationMs: 0,
  action: 'reboot',
} as const;
const replacement = {
  name: 'general-repl-a',
  nodePool: 'general',
  replacementOf: NAME,
  reason: 'Unhealthy',
};
const repair = {
  nodeClaim: { name: NAME, uid: `uid-${NAME}`, nodePool: 'general' },
  vmName: VM,
  policy,
  condition: { type: 'Ready', status: 'False' },
  detail: 'Ready=False for 10m',
  firstStep: 'reboot' as 'reboot' | 'preempted',
  previous: { rebootsTried: 0 },
  escalation: { maxReboots: 1, recoveryMs: 10_000 },
  pollSeconds: 5,
  replacement,
  replacementTimeoutMinutes: 30,
};
const disruptedTaint = expect.objectContaining({ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' });
const markOf = (nodeClaim: NodeClaim | undefined): Condition | undefined =>
  nodeClaim?.status?.conditions?.find((c) => c.type === ConditionTypes.disruptionReason);
const reasons = () => fake.events.map((e) => e.reason);

/** The unhealthy NodeClaim and its Node (NotReady unless `ready`); marked and tainted when `marked`. */
function seedUnhealthy(options: { ready?: 'True' | 'False'; marked?: boolean; deleting?: boolean } = {}) {
  const claim = initializedNodeClaim(NAME, pool);
  if (options.marked) {
    claim.status!.conditions!.push({
      type: ConditionTypes.disruptionReason,
      status: 'True',
      reason: 'Unhealthy',
      message: repair.detail,
      lastTransitionTime: FAKE_NOW.toISOString(),
    });
  }
  if (options.deleting) claim.metadata.deletionTimestamp = FAKE_NOW.toISOString();
  const node = nodeOf(claim, { ready: options.ready ?? 'False' });
  if (options.marked) node.spec.taints = [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }];
  fake.nodes.seed(node);
  return fake.nodeClaims.seed(claim);
}

/** The NodeClaim stored again with these labels over its own. */
function labelled(claim: NodeClaim, labels: Record<string, string>): NodeClaim {
  return fake.nodeClaims.seed({
    ...claim,
    metadata: { ...claim.metadata, labels: { ...claim.metadata.labels, ...labels } },
  });
}

let fake: FakeLifecycle;
let app: AppFunctions;
beforeEach(() => {
  fake = fakeLifecycle();
  app = appFunctions(fake);
  fake.deps.settings = {
    ...fake.deps.settings,
    repair: { ...fake.deps.settings.repair, policies: [policy] },
  };
  fake.nodePools.seed(pool);
  fake.nodeClasses.seed(nodeClass('default', 'Ubuntu2204'));
});

describe(covers(RepairNames.begin), () => {
  test('marks the NodeClaim Unhealthy, taints its Node and says the repair started', async () => {
    seedUnhealthy();

    expect(await app.value(RepairNames.begin, repair)).toBe('ok');
    expect(markOf(fake.nodeClaims.peek(NAME))).toMatchObject({ status: 'True', reason: 'Unhealthy' });
    expect(fake.nodes.peek(NODE)?.spec.taints).toContainEqual(disruptedTaint);
    expect(reasons()).toContain('NodeRepairStarted');
  });

  test('a NodeClaim already being deleted is gone for the repair, and is not marked', async () => {
    seedUnhealthy({ deleting: true });

    expect(await app.value(RepairNames.begin, repair)).toBe('gone');
    expect(fake.nodeClaims.writes).toEqual([]);
    expect(fake.nodes.writes).toEqual([]);
  });
});

describe(covers(RepairNames.reboot), () => {
  test('restarts the VM and answers the restart’s poller state', async () => {
    fake.cloud.seedInstance(NAME);

    expect(await app.value(RepairNames.reboot, repair)).toEqual({ pollerState: `restart-${VM}` });
    expect(fake.cloud.rebooted).toEqual([VM]);
  });

  test('a VM ARM no longer has is gone', async () => {
    expect(await app.value(RepairNames.reboot, repair)).toBe('gone');
    expect(fake.cloud.rebooted).toEqual([]);
  });

  test('ARM unavailable is transient: the restart is sent again later, not now', async () => {
    fake.cloud.seedInstance(NAME);
    fake.cloud.failNext('reboot', new FakeApiError(503, 'service unavailable'));

    expect(await app.call(RepairNames.reboot, repair)).toEqual({ transient: 'service unavailable' });
    expect(fake.cloud.rebooted).toEqual([]);
  });
});

describe(covers(RepairNames.pollReboot), () => {
  test('answers the restart operation’s progress by its poller state', async () => {
    fake.cloud.reboots.set('restart-1', { status: 'InProgress', pollerState: 'restart-2' });
    fake.cloud.reboots.set('restart-2', { status: 'Failed', error: { message: 'VM agent unreachable' } });

    expect(await app.value(RepairNames.pollReboot, 'restart-1')).toEqual({
      status: 'InProgress',
      pollerState: 'restart-2',
    });
    expect(await app.value(RepairNames.pollReboot, 'restart-2')).toEqual({
      status: 'Failed',
      error: { message: 'VM agent unreachable' },
    });
    expect(await app.value(RepairNames.pollReboot, 'restart-3')).toEqual({ status: 'Succeeded' });
  });
});

describe(covers(RepairNames.recordReboot), () => {
  const record = { rebootsTried: 1, lastRebootAt: FAKE_NOW.toISOString() };

  test('writes the reboot on the NodeClaim’s annotations, for a later repair to count, and says so', async () => {
    seedUnhealthy({ marked: true });

    await app.value(RepairNames.recordReboot, { repair, record });

    expect(fake.nodeClaims.peek(NAME)?.metadata.annotations).toMatchObject({
      'karpenter.azure.com/repair-reboots': '1',
      'karpenter.azure.com/repair-last-reboot-at': FAKE_NOW.toISOString(),
    });
    expect(reasons()).toContain('NodeRepairRebooted');
  });

  test('a NodeClaim gone meanwhile is not written, and nothing is said', async () => {
    await app.value(RepairNames.recordReboot, { repair, record });

    expect(fake.nodeClaims.writes).toEqual([]);
    expect(fake.events).toEqual([]);
  });
});

describe(covers(RepairNames.check), () => {
  test('unhealthy while a policy still matches the Node, healthy once it does not', async () => {
    seedUnhealthy({ ready: 'False' });
    expect(await app.value(RepairNames.check, repair)).toBe('unhealthy');

    const node = fake.nodes.peek(NODE)!;
    fake.nodes.seed({ ...node, status: { ...node.status, conditions: [{ type: 'Ready', status: 'True' }] } });
    expect(await app.value(RepairNames.check, repair)).toBe('healthy');
  });

  test('a NodeClaim being deleted is gone; one without a Node is still unhealthy', async () => {
    seedUnhealthy({ deleting: true });
    expect(await app.value(RepairNames.check, repair)).toBe('gone');

    fake.nodeClaims.seed(initializedNodeClaim(NAME, pool));
    await fake.nodes.delete(NODE);
    expect(await app.value(RepairNames.check, repair)).toBe('unhealthy');
  });
});

describe(covers(RepairNames.recover), () => {
  const record = { rebootsTried: 1, lastRebootAt: FAKE_NOW.toISOString() };

  test('untaints the Node, removes the mark and says the node was repaired', async () => {
    seedUnhealthy({ ready: 'True', marked: true });

    await app.value(RepairNames.recover, { repair, record });

    expect(markOf(fake.nodeClaims.peek(NAME))).toBeUndefined();
    expect(fake.nodes.peek(NODE)?.spec.taints ?? []).not.toContainEqual(disruptedTaint);
    expect(fake.events.map((e) => [e.type, e.target.kind, e.target.name, e.reason])).toEqual([
      ['Normal', 'Node', NODE, 'NodeRepaired'],
      ['Normal', 'NodeClaim', NAME, 'NodeRepaired'],
    ]);
  });

  test('a NodeClaim being deleted is left to termination: no untaint, no event', async () => {
    seedUnhealthy({ marked: true, deleting: true });

    await app.value(RepairNames.recover, { repair, record });

    expect(fake.nodes.writes).toEqual([]);
    expect(fake.events).toEqual([]);
  });
});

describe(covers(RepairNames.learnPreemption), () => {
  beforeEach(() => {
    fake.skus.push(d2sV5Sku);
  });

  test('marks the preempted spot offering unavailable, so the replacement avoids it', async () => {
    fake.cloud.seedInstance(NAME, { vmSize: 'Standard_D2s_v5', zoneNumber: '1', spot: true });

    await app.value(RepairNames.learnPreemption, { ...repair, firstStep: 'preempted' });

    expect(fake.unavailableOfferings.length).toBeGreaterThan(0);
    expect(fake.unavailableOfferings.every((u) => u.reason === 'SpotPreempted')).toBe(true);
    expect(fake.unavailableOfferings.every((u) => u.expiresAt > FAKE_NOW)).toBe(true);
  });

  test('a VM Azure already evicted is named by the NodeClaim’s labels: its spot size and zone are avoided', async () => {
    labelled(seedUnhealthy(), {
      [WellKnown.capacityTypeLabel]: 'spot',
      [WellKnown.instanceTypeLabel]: 'Standard_D2s_v5',
      [WellKnown.zoneLabel]: 'westus2-2',
    });

    await app.value(RepairNames.learnPreemption, { ...repair, firstStep: 'preempted' });

    expect(fake.unavailableOfferings.map((u) => [u.reason, u.block])).toEqual([
      [
        'SpotPreempted',
        { capacityType: 'spot', where: { zone: 'westus2-2' }, sizes: { vmSize: 'Standard_D2s_v5' } },
      ],
    ]);
  });

  test('an on-demand VM, or one gone with an on-demand or unlabelled NodeClaim, teaches nothing', async () => {
    fake.cloud.seedInstance(NAME, { vmSize: 'Standard_D2s_v5', zoneNumber: '1', spot: false });
    await app.value(RepairNames.learnPreemption, repair);
    fake.cloud.instances.clear();
    const claim = labelled(seedUnhealthy(), {
      [WellKnown.capacityTypeLabel]: 'on-demand',
      [WellKnown.instanceTypeLabel]: 'Standard_D2s_v5',
      [WellKnown.zoneLabel]: 'westus2-2',
    });
    await app.value(RepairNames.learnPreemption, repair);
    labelled(claim, { [WellKnown.capacityTypeLabel]: 'spot', [WellKnown.instanceTypeLabel]: '' });
    await app.value(RepairNames.learnPreemption, repair);

    expect(fake.unavailableOfferings).toEqual([]);
  });
});

describe(covers(RepairNames.launchReplacement), () => {
  test('creates the replacement from the NodePool’s template and launches it: Pending', async () => {
    fake.cloud.offering = d2sV5Offering();

    expect(await app.value(RepairNames.launchReplacement, replacement)).toEqual({ status: 'Pending' });
    const created = fake.nodeClaims.peek(replacement.name);
    expect(created?.metadata.annotations?.['karpenter.azure.com/replacement-of']).toBe(NAME);
    expect(created?.metadata.labels?.[WellKnown.nodePoolLabel]).toBe('general');
    expect(fake.cloud.created).toEqual([vmNameFor(replacement.name)]);
  });

  test('no offering fits: the launch fails and the replacement says why', async () => {
    const check = await app.value<{ status: string; why?: string }>(
      RepairNames.launchReplacement,
      replacement,
    );

    expect(check.status).toBe('Failed');
    expect(check.why).toContain(`replacement ${replacement.name} failed to launch`);
  });

  test('a NodePool deleted meanwhile: Failed, nothing created', async () => {
    await fake.nodePools.delete('general');

    expect(await app.value(RepairNames.launchReplacement, replacement)).toEqual({
      status: 'Failed',
      why: 'NodePool general no longer exists',
    });
    expect(fake.nodeClaims.writes).toEqual([]);
  });
});

describe(covers(RepairNames.checkReplacement), () => {
  test('Initialized once the replacement is; Failed once it is gone', async () => {
    fake.nodeClaims.seed(initializedNodeClaim(replacement.name, pool));
    expect(await app.value(RepairNames.checkReplacement, replacement.name)).toEqual({
      status: 'Initialized',
    });

    await fake.nodeClaims.delete(replacement.name);
    expect(await app.value(RepairNames.checkReplacement, replacement.name)).toEqual({
      status: 'Failed',
      why: `replacement ${replacement.name} was deleted`,
    });
  });
});

describe(covers(RepairNames.replace), () => {
  test('deletes the unhealthy NodeClaim with the repair’s event, and starts its termination', async () => {
    seedUnhealthy({ marked: true });

    await app.value(RepairNames.replace, { repair, replacementReady: true, why: 'no reboot left' });

    expect(fake.nodeClaims.peek(NAME)?.metadata.deletionTimestamp).toBeDefined();
    const replacing = fake.events.find((e) => e.reason === 'NodeRepairReplacing');
    expect(replacing?.message).toContain(`replacement ${replacement.name} is Initialized`);
    expect(app.orchestrations.started.map((s) => s.name)).toEqual([TerminationNames.orchestrationV2]);
  });

  test('a NodeClaim already being deleted is not deleted again', async () => {
    seedUnhealthy({ marked: true, deleting: true });

    await app.value(RepairNames.replace, { repair, replacementReady: false, why: 'timed out' });

    expect(fake.nodeClaims.writes).toEqual([]);
    expect(fake.events).toEqual([]);
    expect(app.orchestrations.started).toEqual([]);
  });
});

describe(covers(RepairNames.orchestration), () => {
  const replay = (input: typeof repair, respond: Parameters<typeof sequential>[0]) =>
    replayOrchestration({
      name: RepairNames.orchestration,
      handler: app.orchestration(RepairNames.orchestration).handler,
      instanceId: `repair-uid-${NAME}`,
      input,
      start: FAKE_NOW,
      respond: sequential(respond),
    });
  const seconds = (at: Date) => (at.getTime() - FAKE_NOW.getTime()) / 1000;
  const rebootedAt = new Date(FAKE_NOW.getTime() + 5_000).toISOString();

  test('a reboot that clears the condition: reboot, poll, record, check until healthy, recover', async () => {
    const run = await replay(repair, (name, _input, call) => {
      if (name === RepairNames.begin) return { result: 'ok' };
      if (name === RepairNames.reboot) return { result: { pollerState: 'restart-1' } };
      if (name === RepairNames.pollReboot) return { result: { status: 'Succeeded' } };
      if (name === RepairNames.recordReboot || name === RepairNames.recover) return { result: null };
      if (name === RepairNames.check) return { result: call < 2 ? 'unhealthy' : 'healthy' };
      return undefined;
    });

    expect(run.result).toMatchObject({
      status: 'completed',
      output: { outcome: 'Recovered', rebootsTried: 1, lastRebootAt: rebootedAt },
    });
    expect(run.answered.map((a) => [a.name, seconds(a.at)])).toEqual([
      [RepairNames.begin, 0],
      [RepairNames.reboot, 0],
      ['timer', 5],
      [RepairNames.pollReboot, 5],
      [RepairNames.recordReboot, 5],
      ['timer', 10],
      [RepairNames.check, 10],
      ['timer', 15],
      [RepairNames.check, 15],
      [RepairNames.recover, 15],
    ]);
    expect(run.answered[3]?.input).toBe('restart-1');
  });

  test('a reboot that does not help within the recovery time escalates to a replacement', async () => {
    const run = await replay(repair, (name, _input, call) => {
      if (name === RepairNames.begin) return { result: 'ok' };
      if (name === RepairNames.reboot) return { result: { pollerState: 'restart-1' } };
      if (name === RepairNames.pollReboot) return { result: { status: 'Succeeded' } };
      if (name === RepairNames.recordReboot || name === RepairNames.replace) return { result: null };
      if (name === RepairNames.check) return { result: 'unhealthy' };
      if (name === RepairNames.launchReplacement) return { result: { status: 'Pending' } };
      if (name === RepairNames.checkReplacement)
        return { result: call < 2 ? { status: 'Pending' } : { status: 'Initialized' } };
      return undefined;
    });

    expect(run.result).toMatchObject({
      status: 'completed',
      output: { outcome: 'Replaced', replacement: replacement.name, replacementReady: true, rebootsTried: 1 },
      customStatus: { phase: 'replacing' },
    });
    // Checked at 10 s and 15 s after the reboot at 5 s: not cleared within 10 s, so one replacement.
    expect(run.answered.filter((a) => a.name === RepairNames.check).map((a) => seconds(a.at))).toEqual([
      10, 15,
    ]);
    expect(run.answered.filter((a) => a.name === RepairNames.reboot)).toHaveLength(1);
    expect(run.answered.at(-1)).toMatchObject({
      name: RepairNames.replace,
      input: {
        replacementReady: true,
        why: 'Ready=False did not clear within 10 s of reboot 1',
      },
    });
  });

  test('a spot eviction notice replaces at once and drains the old node by the notice’s end', async () => {
    const drainBy = new Date(FAKE_NOW.getTime() + 12_000).toISOString();
    const run = await replay({ ...repair, firstStep: 'preempted', drainBy } as typeof repair, (name) => {
      if (name === RepairNames.begin) return { result: 'ok' };
      if (name === RepairNames.learnPreemption || name === RepairNames.replace) return { result: null };
      if (name === RepairNames.launchReplacement || name === RepairNames.checkReplacement)
        return { result: { status: 'Pending' } };
      return undefined;
    });

    expect(run.result).toMatchObject({
      status: 'completed',
      output: { outcome: 'Replaced', replacementReady: false, rebootsTried: 0 },
      customStatus: { phase: 'preempted' },
    });
    expect(run.answered.some((a) => a.name === RepairNames.reboot)).toBe(false);
    // Polled every 5 s, the last wait cut to the notice's end.
    expect(
      run.answered.filter((a) => a.name === RepairNames.checkReplacement).map((a) => seconds(a.at)),
    ).toEqual([5, 10, 12]);
    expect(run.answered.at(-1)).toMatchObject({
      name: RepairNames.replace,
      at: new Date(drainBy),
      input: { replacementReady: false, why: 'spot eviction notice' },
    });
  });

  test('a NodeClaim gone at the start ends the repair Gone, sending nothing', async () => {
    const run = await replay(repair, (name) => (name === RepairNames.begin ? { result: 'gone' } : undefined));

    expect(run.result).toMatchObject({ status: 'completed', output: { outcome: 'Gone', rebootsTried: 0 } });
    expect(run.answered.map((a) => a.name)).toEqual([RepairNames.begin]);
  });
});
