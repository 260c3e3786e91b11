// The sweep's leftover-launch cleanup against in-memory fakes: a NodeClaim that disappears between two
// sweeps has its still-running launch monitor stopped and both its finished instances (launch monitor,
// termination) purged; a process's first sweep only records a baseline.
import { beforeEach, describe, expect, test } from 'vitest';
import { launchMonitorInstanceId } from '../../../shared/lifecycle/launch/launch-monitor.js';
import { MAX_CLEANUP_ATTEMPTS } from '../../../shared/lifecycle/sweep/launch-leftovers.js';
import type { SweepContext } from '../../../shared/lifecycle/sweep-step/sweep-step.js';
import { launchLeftoversStep } from '../../../shared/lifecycle/sweep/steps/launch-leftovers.js';
import { terminationInstanceId } from '../../../shared/lifecycle/termination/termination.js';
import type { NodeClaim } from '../../../shared/models/karpenter.js';
import { LaunchMonitorNames, TerminationNames } from '../../../shared/runtime/function-names.js';
import {
  fakeLifecycle,
  fakeSweepContext,
  FakeOrchestrations,
  type FakeLifecycle,
} from '../../support/fake-lifecycle.js';

const nodeClassRef = { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' };

function nodeClaim(name: string): NodeClaim {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: { name, uid: `uid-${name}` },
    spec: { nodeClassRef, requirements: [] },
  };
}

describe('launch-leftovers step', () => {
  let fake: FakeLifecycle;
  let orchestrations: FakeOrchestrations;
  let memory: SweepContext['memory'];
  /** One sweep that sees `nodeClaims`, keeping the step's memory between sweeps as the process does. */
  const sweep = async (...nodeClaims: NodeClaim[]) => {
    const context = fakeSweepContext(fake, orchestrations, { nodeClaims });
    context.memory = memory;
    const report = await launchLeftoversStep.run(context);
    memory = context.memory;
    return report;
  };
  beforeEach(() => {
    fake = fakeLifecycle();
    orchestrations = new FakeOrchestrations();
    memory = fakeSweepContext(fake, orchestrations).memory;
  });

  test('the first sweep of a process only records a baseline', async () => {
    orchestrations.seed(launchMonitorInstanceId('uid-gone'), LaunchMonitorNames.orchestration, 'Running');

    const report = await sweep(nodeClaim('a'));

    expect(report.acted).toBe(0);
    expect(orchestrations.terminated).toEqual([]);
    expect(orchestrations.purged).toEqual([]);
  });

  test('a NodeClaim gone since the last sweep has its running monitor stopped, then both histories purged', async () => {
    const monitor = launchMonitorInstanceId('uid-b');
    const termination = terminationInstanceId('uid-b');
    orchestrations.seed(monitor, LaunchMonitorNames.orchestration, 'Running');
    orchestrations.seed(termination, TerminationNames.orchestration, 'Completed');
    await sweep(nodeClaim('a'), nodeClaim('b'));

    await sweep(nodeClaim('a'));
    expect(orchestrations.terminated).toEqual([monitor]);
    expect(orchestrations.purged).toEqual([termination]);

    // The next sweep finds the monitor ended and purges it; after that the UID is forgotten.
    await sweep(nodeClaim('a'));
    expect(orchestrations.purged).toEqual([termination, monitor]);
    expect(memory.leftovers.pending.size).toBe(0);
  });

  test('a termination still finishing is left alone and purged once it has ended', async () => {
    const termination = terminationInstanceId('uid-b');
    orchestrations.seed(termination, TerminationNames.orchestration, 'Running');
    await sweep(nodeClaim('b'));

    await sweep();
    expect(orchestrations.terminated).toEqual([]);
    expect(orchestrations.purged).toEqual([]);

    orchestrations.seed(termination, TerminationNames.orchestration, 'Completed');
    await sweep();
    expect(orchestrations.purged).toEqual([termination]);
  });

  test('a leftover that never ends is given up after a bounded number of sweeps', async () => {
    orchestrations.seed(terminationInstanceId('uid-b'), TerminationNames.orchestration, 'Running');
    await sweep(nodeClaim('b'));

    await sweep();
    expect(memory.leftovers.pending.get('uid-b')).toBe(1);
    for (let i = 1; i < MAX_CLEANUP_ATTEMPTS; i += 1) await sweep();

    expect(memory.leftovers.pending.size).toBe(0);
  });
});
