// Termination's history stays bounded while a PodDisruptionBudget holds its drain up for hours. The real
// termination orchestrator runs on the local host's durable engine (durable-functions' replay) under a
// virtual clock, with the real drain pass against in-memory fakes of the cluster: a pod whose eviction
// the API answers 429 (what a PDB that allows no disruption answers) for six simulated hours. The VM
// and finish steps are fakes that count their calls; the VM step has vm-removal.test.ts. Both versions
// of the orchestrator are held to the same bound: the second's one activity drains the same way.
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, test } from 'vitest';
import { outageTolerantRegistration } from '../../../shared/lifecycle/durable/durable-activity.js';
import { HISTORY_EVENTS_PER_TASK } from '../../../shared/lifecycle/durable/history-budget.js';
import { drainNodeClaim, type DrainInput } from '../../../shared/lifecycle/termination/drain.js';
import {
  TERMINATION_TASKS_PER_EXECUTION,
  TerminationActivities,
  terminationInstanceId,
  terminationOrchestrator,
  type TerminationInput,
  type TerminationProgress,
} from '../../../shared/lifecycle/termination/termination.js';
import {
  TerminationV2Activities,
  terminationV2Orchestrator,
} from '../../../shared/lifecycle/termination/termination-v2.js';
import { WellKnown } from '../../../shared/models/karpenter.js';
import { orchestration, type FunctionDefinition } from '../../../shared/runtime/definitions.js';
import { TerminationNames } from '../../../shared/runtime/function-names.js';
import { FakeApiError } from '../../support/fake-api-error.js';
import { FAKE_NOW, fakeLifecycle, type FakeLifecycle } from '../../support/fake-lifecycle.js';
import { startVirtualDurableEngine } from '../../support/virtual-durable-engine.js';
import { condition, node, nodeClaim } from '../registration-fixtures.js';

const HOUR = 3_600_000;
const POLL_SECONDS = 5;
const UID = 'uid-nodeclaim-1';
const INSTANCE = terminationInstanceId(UID);
/**
 * The stated bound of one execution's history in a blocked drain: four events a task over the task budget,
 * plus the first episode's ExecutionStarted and the last episode's start and wake-up, not yet truncated.
 */
const HISTORY_BOUND = HISTORY_EVENTS_PER_TASK * TERMINATION_TASKS_PER_EXECUTION + 4;

const blockedPod: V1Pod = {
  metadata: {
    name: 'web',
    namespace: 'apps',
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-rs', uid: 'owner-web' }],
  },
  spec: { nodeName: 'aks-default-abcde', containers: [{ name: 'app' }] },
  status: { phase: 'Running', startTime: new Date(FAKE_NOW.getTime() - HOUR) },
};

interface Scenario {
  fake: FakeLifecycle;
  definitions: FunctionDefinition[];
  calls: { deleteVm: number; finish: number };
  /** When (virtual ms) the drain deleted a pod past the grace period. */
  deletions: number[];
  now: { current: () => number };
}

/** A deleted NodeClaim whose one pod a PDB keeps; `terminationGracePeriod` if given. */
function blockedDrain(terminationGracePeriod?: string): Scenario {
  const fake = fakeLifecycle();
  const claim = nodeClaim({
    conditions: [condition('Registered', 'True')],
    deletionTimestamp: FAKE_NOW.toISOString(),
  });
  claim.metadata.finalizers = [WellKnown.terminationFinalizer];
  if (terminationGracePeriod) claim.spec.terminationGracePeriod = terminationGracePeriod;
  fake.nodeClaims.seed(claim);
  fake.nodes.seed(node({}));
  fake.pods.seed(blockedPod);
  fake.pods.refusals.set(
    'apps/web',
    new FakeApiError(429, 'Cannot evict pod as it would violate the pod disruption budget.'),
  );
  const now = { current: () => FAKE_NOW.getTime() };
  const deps = { ...fake.deps, now: () => new Date(now.current()) };
  const scenario: Scenario = { fake, definitions: [], calls: { deleteVm: 0, finish: 0 }, deletions: [], now };
  const drain = async (drainInput: DrainInput) => {
    const before = fake.pods.deleted.length;
    const progress = await drainNodeClaim(deps, drainInput);
    if (fake.pods.deleted.length > before) {
      scenario.deletions.push(now.current());
      // The kubelet finishes a deleted pod at once: the next pass finds the node empty.
      fake.pods.remove({ namespace: 'apps', name: 'web' });
    }
    return progress;
  };
  scenario.definitions = [
    orchestration(TerminationNames.orchestration, terminationOrchestrator),
    outageTolerantRegistration(TerminationActivities.drain, drain),
    outageTolerantRegistration(TerminationActivities.deleteVm, async () => {
      scenario.calls.deleteVm += 1;
      return 'Gone' as const;
    }),
    outageTolerantRegistration(TerminationActivities.finish, async () => {
      scenario.calls.finish += 1;
    }),
    orchestration(TerminationNames.orchestrationV2, terminationV2Orchestrator),
    // The second version's step: the same drain pass, and once drained the VM and the finish at once.
    outageTolerantRegistration(TerminationV2Activities.advance, async ({ termination, phase }) => {
      if (phase === 'Draining') {
        const progress = await drain(termination);
        if (progress.status !== 'Drained') return { phase: 'Draining' as const, drain: progress };
      }
      scenario.calls.deleteVm += 1;
      scenario.calls.finish += 1;
      return { phase: 'Terminated' as const };
    }),
  ];
  return scenario;
}

const input: TerminationInput = {
  nodeClaim: { name: 'default-abcde', uid: UID },
  vmName: 'aks-default-abcde',
  pollIntervalSeconds: 5,
  drainPollSeconds: POLL_SECONDS,
};

describe.each([
  { version: 'first version', name: TerminationNames.orchestration },
  { version: 'second version', name: TerminationNames.orchestrationV2 },
])('termination history while a PodDisruptionBudget blocks the drain ($version)', ({ name }) => {
  test('six simulated hours of a blocked drain end with one execution under the stated bound, having continued as new', async () => {
    const scenario = blockedDrain();
    const engine = await startVirtualDurableEngine(scenario.definitions, FAKE_NOW);
    scenario.now.current = () => engine.clock.now();
    try {
      await engine.client.startNew(name, { instanceId: INSTANCE, input });
      await engine.runUntil(FAKE_NOW.getTime() + 6 * HOUR);

      const status = await engine.client.getStatus(INSTANCE);
      const progress = status?.customStatus as TerminationProgress;
      const record = await engine.record(INSTANCE);
      const longest = engine.longestHistory.get(INSTANCE) ?? 0;
      const continuations = engine.events.filter((e) => e.type === 'orchestration.continuedAsNew').length;

      expect(status?.runtimeStatus).toBe('Running');
      // One pass every 5 s for six hours, counted across every execution.
      expect(progress.passes).toBe((6 * HOUR) / (POLL_SECONDS * 1000) + 1);
      expect(progress.phase).toBe('Draining');
      expect(progress.startedAt).toBe(FAKE_NOW.toISOString());
      expect(progress.lastDrain).toEqual({ status: 'Draining', waiting: 1, blockedByPdb: 1, deleted: 0 });
      expect(progress.continuations).toBe(continuations);
      expect(continuations).toBe(Math.floor(progress.passes / (TERMINATION_TASKS_PER_EXECUTION / 2)));
      expect(longest).toBeLessThanOrEqual(HISTORY_BOUND);
      expect(record?.history.length).toBeLessThanOrEqual(HISTORY_BOUND);
      // Never evicted, never deleted (no grace period), and the VM left alone while the drain waits.
      expect(scenario.fake.pods.evicted).toEqual([]);
      expect(scenario.fake.pods.deleted).toEqual([]);
      expect(scenario.calls).toEqual({ deleteVm: 0, finish: 0 });
    } finally {
      await engine.stop();
    }
  });

  test('terminationGracePeriod ends the drain at its time, counted from the deletion across continuations', async () => {
    const scenario = blockedDrain('2h');
    const engine = await startVirtualDurableEngine(scenario.definitions, FAKE_NOW);
    scenario.now.current = () => engine.clock.now();
    try {
      await engine.client.startNew(name, { instanceId: INSTANCE, input });
      await engine.runUntil(FAKE_NOW.getTime() + 3 * HOUR);

      const status = await engine.client.getStatus(INSTANCE);
      expect(status?.runtimeStatus).toBe('Completed');
      expect(status?.output).toBe('Terminated');
      const continuations = engine.events.filter((e) => e.type === 'orchestration.continuedAsNew').length;
      expect(continuations).toBeGreaterThan(10);
      // Deleted once, on the first pass at or after deletion + 2 h: the continuations did not restart it.
      expect(scenario.fake.pods.deleted).toEqual(['apps/web']);
      expect(scenario.deletions).toEqual([FAKE_NOW.getTime() + 2 * HOUR]);
      expect(scenario.calls).toEqual({ deleteVm: 1, finish: 1 });
      const progress = status?.customStatus as TerminationProgress;
      expect(progress).toMatchObject({
        phase: 'DeletingVm',
        continuations,
        startedAt: FAKE_NOW.toISOString(),
      });
      expect(engine.longestHistory.get(INSTANCE)).toBeLessThanOrEqual(HISTORY_BOUND);
    } finally {
      await engine.stop();
    }
  });
});
