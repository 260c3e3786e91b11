// One successful VM PUT per NodeClaim launch, whatever ARM and the queue do: throttled, failed and hung
// PUTs while other deliveries of the same NodeClaim's events run. Counted in the ARM emulator's request
// log (a PUT that created or updated the VM answered 2xx; a hung one that took effect counts too, since
// the VM exists even though the client never heard). Real control plane, Azurite, ARM emulator, the
// function app in the in-process host.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FaultEffect } from '../../local/arm-emulator/faults.js';
import type { RequestLogEntry } from '../../local/arm-emulator/request-log.js';
import { findCondition } from '../../shared/decisions/conditions.js';
import { vmNameFor } from '../../shared/cloudprovider/azure/decisions/vm-spec.js';
import type { NodeClaim } from '../../shared/models/index.js';
import { exampleRequirements, nodeClass, nodeClassRef, nodePool } from '../support/fixtures.js';
import { eventually, startLaunchStack, type LaunchStack } from '../support/launch-stack.js';

/** Each ARM request is abandoned after this long, so a hung PUT fails like a dropped connection. */
const requestTimeoutSeconds = 2;

let stack: LaunchStack;
const suffix = randomUUID().slice(0, 6);
const nodePoolName = `once-${suffix}`;
const nodeClassName = `once-${suffix}`;

beforeAll(async () => {
  stack = await startLaunchStack({
    env: { REQUEST_TIMEOUT_SECONDS: String(requestTimeoutSeconds) },
    // Deliveries that lose the claim are retried; five of them for one NodeClaim must not be poisoned.
    maxDequeueCount: 20,
  });
  await stack.admin.objects.nodeClasses.create(nodeClass(nodeClassName, 'Ubuntu2204'));
  await stack.admin.objects.nodePools.create(
    nodePool(nodePoolName, nodeClassName, { budgets: [{ nodes: '5' }] }),
  );
});

afterAll(async () => {
  await stack?.stop();
});

let counter = 0;
async function createNodeClaim(): Promise<NodeClaim> {
  counter += 1;
  return stack.deps.objects.nodeClaims.create({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name: `${nodePoolName}-${counter}-${randomUUID().slice(0, 4)}`,
      labels: { 'karpenter.sh/nodepool': nodePoolName, [stack.runLabel.key]: stack.runLabel.value },
    },
    spec: { nodeClassRef: nodeClassRef(nodeClassName), requirements: exampleRequirements },
  });
}

async function announce(nodeClaim: NodeClaim, changeType: 'ADDED' | 'MODIFIED' | 'RESYNC') {
  await stack.publish({
    kind: 'NodeClaim',
    name: nodeClaim.metadata.name,
    uid: nodeClaim.metadata.uid ?? '',
    resourceVersion: nodeClaim.metadata.resourceVersion ?? '1',
    changeType,
  });
}

const puts = (vmName: string): RequestLogEntry[] =>
  stack.emulator.controls.requests({ kind: 'putVm', vmName, method: 'PUT' });
const successful = (entries: RequestLogEntry[]) => entries.filter((e) => e.status >= 200 && e.status < 300);
const describePuts = (entries: RequestLogEntry[]) =>
  entries.map((e) => `${e.status || 'none'}${e.hung ? ' (hung)' : ''}`).join(', ');

async function launchedTrue(name: string): Promise<NodeClaim> {
  return eventually(
    async () => {
      const current = await stack.deps.objects.nodeClaims.get(name);
      return findCondition(current?.status?.conditions, 'Launched')?.status === 'True' ? current : undefined;
    },
    `${name} Launched=True`,
    60_000,
  );
}

/** Every VM of this NodeClaim in the emulator, and the NodeClaim's labels naming the VM's offering. */
function expectOneVmMatching(nodeClaim: NodeClaim): void {
  const vms = stack.emulator.controls.vms().filter((vm) => vm.name === vmNameFor(nodeClaim.metadata.name));
  expect(vms).toHaveLength(1);
  expect(nodeClaim.metadata.labels?.['node.kubernetes.io/instance-type']?.toLowerCase()).toBe(
    vms[0]?.vmSize.toLowerCase(),
  );
}

describe('one successful VM PUT per NodeClaim', () => {
  test('a throttled PUT while a second delivery launches: 429, 201, 412 (the second delivery created it; the first adopts it)', async () => {
    const nodeClaim = await createNodeClaim();
    const vmName = vmNameFor(nodeClaim.metadata.name);
    // Delivery B must PUT while A waits: a Retry-After far longer than a delivery takes on a loaded machine.
    stack.emulator.controls.injectFault({
      match: { vmName },
      effect: { type: 'throttle', requestKind: 'putVm', retryAfterSeconds: 12 },
      times: 1,
    });
    // Delivery A (ADDED) claims the NodeClaim and PUTs; the SDK waits out Retry-After.
    await announce(nodeClaim, 'ADDED');
    await eventually(() => (puts(vmName).some((e) => e.status === 429) ? true : undefined), 'the 429');
    // Delivery B: the MODIFIED event that A's own claim produced, while A is still inside the SDK's retry.
    const claimed = await stack.deps.objects.nodeClaims.get(nodeClaim.metadata.name);
    expect(claimed?.status?.providerID).toBeUndefined();
    await announce(claimed ?? nodeClaim, 'MODIFIED');

    const launched = await launchedTrue(nodeClaim.metadata.name);
    await stack.host.waitForIdle();
    const log = puts(vmName);
    console.log(`throttle times 1, two deliveries: PUTs answered ${describePuts(log)}`);
    expect(successful(log)).toHaveLength(1);
    expect(log.map((e) => e.status)).toEqual([429, 201, 412]);
    expectOneVmMatching(launched);
  });

  const cases: { name: string; effect: FaultEffect; times?: number }[] = [
    {
      name: 'throttled (429, Retry-After 2 s)',
      effect: { type: 'throttle', requestKind: 'putVm', retryAfterSeconds: 2 },
    },
    {
      name: 'failed (500)',
      effect: { type: 'syncError', status: 500, code: 'InternalServerError', message: 'boom' },
    },
    { name: 'hung after ARM accepted it (no answer ever)', effect: { type: 'hang', requestKind: 'putVm' } },
    {
      name: 'hung before ARM saw it (connection held, then reset)',
      effect: { type: 'hang', requestKind: 'putVm', processed: false, seconds: requestTimeoutSeconds * 2 },
    },
    {
      name: 'answered late (after the client gave up)',
      effect: { type: 'hang', requestKind: 'putVm', seconds: requestTimeoutSeconds + 1 },
    },
  ];

  test.each(cases)(
    'a PUT $name, with 5 concurrent deliveries: one successful PUT, one VM',
    async ({ effect }) => {
      const nodeClaim = await createNodeClaim();
      const vmName = vmNameFor(nodeClaim.metadata.name);
      stack.emulator.controls.injectFault({ match: { vmName }, effect, times: 2 });
      await Promise.all(
        (['ADDED', 'MODIFIED', 'MODIFIED', 'RESYNC', 'MODIFIED'] as const).map((changeType) =>
          announce(nodeClaim, changeType),
        ),
      );
      const launched = await launchedTrue(nodeClaim.metadata.name);
      await stack.host.waitForIdle();
      const log = puts(vmName);
      console.log(`PUT ${effect.type}, 5 deliveries: PUTs answered ${describePuts(log)}`);
      expect(successful(log)).toHaveLength(1);
      expectOneVmMatching(launched);
    },
  );

  test('operation polls that never answer are retried, not taken for an outcome', async () => {
    const nodeClaim = await createNodeClaim();
    stack.emulator.controls.injectFault({ effect: { type: 'hang', requestKind: 'getOperation' }, times: 2 });
    await announce(nodeClaim, 'ADDED');
    const launched = await launchedTrue(nodeClaim.metadata.name);
    expect(findCondition(launched.status?.conditions, 'Launched')?.reason).not.toBe('LaunchFailed');
    const polls = stack.emulator.controls.requests({ kind: 'getOperation' }).filter((e) => e.hung);
    expect(polls).toHaveLength(2);
    expect(successful(puts(vmNameFor(nodeClaim.metadata.name)))).toHaveLength(1);
  });
});
