// The ARM emulator driven by the real @azure/arm-compute client (v25) over HTTPS.
//
// Trust: the client gets the emulator's CA through `tlsOptions.ca` (a documented pipeline option that
// core-rest-pipeline turns into the https.Agent's `ca`), so this file does not depend on
// NODE_EXTRA_CA_CERTS being set before the worker started. The NODE_EXTRA_CA_CERTS route, which the
// Function App uses, is checked separately in a child process. Nothing is mocked: authentication is
// the only part of ARM the emulator does not emulate (it accepts any Bearer token).

import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ComputeManagementClient, restorePoller, type VirtualMachine } from '@azure/arm-compute';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import {
  skuCatalog,
  startArmEmulator,
  type ArmEmulator,
  type VmChangeEvent,
} from '../../local/arm-emulator/index.js';
import { emulatorRequest } from '../support/emulator-request.js';
import { createComputeClient } from '../../shared/azure/compute-client.js';
import {
  emulatorComputeClient,
  fixedTokenCredential,
  linuxVmParameters,
  type ComputeClientOptions,
} from '../support/arm-client.js';
import { eventually } from '../support/launch-stack.js';

const subscriptionId = '00000000-0000-0000-0000-000000000001';
const resourceGroup = 'rg-emulator-test';
const location = 'westus2';

interface RestErrorLike {
  name: string;
  code?: string;
  statusCode?: number;
  message: string;
  response?: { headers: { get(name: string): string | undefined } };
}

function isRestError(error: unknown): error is RestErrorLike {
  return error instanceof Error && error.name === 'RestError';
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function vmParameters(name: string, overrides: Partial<VirtualMachine> = {}): VirtualMachine {
  return {
    ...linuxVmParameters({
      name,
      subscriptionId,
      resourceGroup,
      location,
      zone: '1',
      vmSize: 'Standard_D2s_v5',
      tags: { 'karpenter.sh/nodepool': 'general-purpose', 'karpenter.azure.com/cluster': 'test' },
      customData: Buffer.from(`#!/bin/bash\necho bootstrap ${name}\n`).toString('base64'),
    }),
    ...overrides,
  };
}

let emulator: ArmEmulator;
let client: ComputeManagementClient;

function makeClient(options: ComputeClientOptions = {}): ComputeManagementClient {
  return emulatorComputeClient(emulator, subscriptionId, options);
}

/** Drives a restored poller the way the launch orchestration does: one poll per wake-up. */
async function pollToCompletion<T>(poller: {
  poll(): Promise<unknown>;
  isDone: boolean;
  result: T | undefined;
}): Promise<T | undefined> {
  for (let i = 0; i < 200 && !poller.isDone; i++) {
    await poller.poll();
    if (!poller.isDone) await sleep(100);
  }
  expect(poller.isDone).toBe(true);
  return poller.result;
}

async function sharedCa(): Promise<{ certPem: string; keyPem: string } | undefined> {
  // The vitest global setup provides the project's development CA; use it when present so this file
  // exercises the same trust chain as the other integration tests.
  const certPath = inject('devCaCertPath');
  const keyPath = inject('devCaKeyPath');
  if (!certPath || !keyPath) return undefined;
  return { certPem: await readFile(certPath, 'utf8'), keyPem: await readFile(keyPath, 'utf8') };
}

function raw(method: string, path: string, headers: Record<string, string> = {}, body?: unknown) {
  return emulatorRequest(emulator, method, path, { headers, ...(body !== undefined ? { body } : {}) });
}

beforeAll(async () => {
  const ca = await sharedCa();
  emulator = await startArmEmulator({
    ...(ca ? { ca } : {}),
    latencies: { createMs: 300, deleteMs: 200, retryAfterSeconds: 1 },
    pageSizes: { skus: 20, vms: 2 },
  });
  client = makeClient();
});

afterAll(async () => {
  await emulator?.stop();
});

beforeEach(() => {
  emulator.controls.reset();
});

describe('ARM emulator through the real @azure/arm-compute client', () => {
  it('completes a VM creation LRO after serialize → restorePoller → poll, following Azure-AsyncOperation', async () => {
    const poller = client.virtualMachines.createOrUpdate(
      resourceGroup,
      'vm-lro-ok',
      vmParameters('vm-lro-ok'),
    );
    await poller.submitted();
    const state = await poller.serialize();
    expect(JSON.parse(state)).toMatchObject({
      state: { config: { metadata: { mode: 'OperationLocation' } } },
    });

    const restored = restorePoller(client, state, client.virtualMachines.createOrUpdate);
    const vm = await pollToCompletion(restored);
    expect(vm?.provisioningState).toBe('Succeeded');
    expect(vm?.id).toBe(
      `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/providers/Microsoft.Compute/virtualMachines/vm-lro-ok`,
    );
    expect(vm?.hardwareProfile?.vmSize).toBe('Standard_D2s_v5');
    expect(vm?.zones).toEqual(['1']);
    expect(vm?.osProfile?.computerName).toBe('vm-lro-ok');
    expect(vm?.osProfile?.customData).toBeUndefined();
    expect(vm?.networkProfile?.networkInterfaces?.[0]?.deleteOption).toBe('Delete');
    expect(vm?.storageProfile?.osDisk?.deleteOption).toBe('Delete');

    const requests = emulator.controls.requests({ vmName: 'vm-lro-ok' });
    expect(requests[0]).toMatchObject({ method: 'PUT', status: 201 });
    expect(requests[0]?.url).toContain('api-version=2026-04-01');
    expect(emulator.controls.requests({ kind: 'getOperation' }).length).toBeGreaterThan(0);
    // The poller finishes with a GET of the VM itself.
    expect(requests.at(-1)).toMatchObject({ method: 'GET', kind: 'getVm', status: 200 });

    const stored = emulator.controls.vms().find((v) => v.name === 'vm-lro-ok');
    expect(stored?.provisioningState).toBe('Succeeded');
    expect(Buffer.from(stored?.customData ?? '', 'base64').toString()).toContain('bootstrap vm-lro-ok');
  });

  it('honours Retry-After between operation polls in pollUntilDone', async () => {
    emulator.controls.setLatencies({ createMs: 2_500 });
    const poller = client.virtualMachines.createOrUpdate(
      resourceGroup,
      'vm-retry-after',
      vmParameters('vm-retry-after'),
    );
    const vm = await poller.pollUntilDone();
    expect(vm.provisioningState).toBe('Succeeded');
    const polls = emulator.controls.requests({ kind: 'getOperation' }).map((r) => Date.parse(r.time));
    expect(polls.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < polls.length; i++) {
      expect((polls[i] ?? 0) - (polls[i - 1] ?? 0)).toBeGreaterThanOrEqual(900);
    }
  });

  it('surfaces an allocation failure of the LRO as an Error carrying the ARM code', async () => {
    emulator.controls.injectFault({
      match: { vmName: 'vm-alloc-*', zone: '1' },
      effect: { type: 'ZonalAllocationFailed' },
      times: 1,
    });
    const poller = client.virtualMachines.createOrUpdate(
      resourceGroup,
      'vm-alloc-1',
      vmParameters('vm-alloc-1'),
    );
    await poller.submitted();
    const restored = restorePoller(client, await poller.serialize(), client.virtualMachines.createOrUpdate);

    const error = await caught(pollToCompletion(restored));
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toContain('ZonalAllocationFailed');
    expect(message).toContain('We do not have sufficient capacity for the requested VM size in this zone');
    expect((error as { code?: unknown }).code).toBeUndefined();
    expect(emulator.controls.vms().find((v) => v.name === 'vm-alloc-1')).toMatchObject({
      provisioningState: 'Failed',
      failure: { code: 'ZonalAllocationFailed' },
    });
    // The VM itself tells why, in its instance view, as Compute does; a plain GET has no instance view.
    const viewed = await client.virtualMachines.get(resourceGroup, 'vm-alloc-1', { expand: 'instanceView' });
    expect(viewed.instanceView?.statuses).toContainEqual(
      expect.objectContaining({
        code: 'ProvisioningState/failed/ZonalAllocationFailed',
        level: 'Error',
        message: expect.stringContaining('sufficient capacity for the requested VM size in this zone'),
      }),
    );
    expect((await client.virtualMachines.get(resourceGroup, 'vm-alloc-1')).instanceView).toBeUndefined();

    // The rule was one-shot: the next launch succeeds.
    const next = await client.virtualMachines
      .createOrUpdate(resourceGroup, 'vm-alloc-2', vmParameters('vm-alloc-2'))
      .pollUntilDone();
    expect(next.provisioningState).toBe('Succeeded');
    const running = await client.virtualMachines.get(resourceGroup, 'vm-alloc-2', { expand: 'instanceView' });
    expect(running.instanceView?.statuses?.map((status) => status.code)).toEqual([
      'ProvisioningState/succeeded',
      'PowerState/running',
    ]);
  });

  it('answers a family quota fault synchronously on the PUT with 409 OperationNotAllowed', async () => {
    emulator.controls.injectFault({ match: { vmSize: 'Standard_D4s_v5' }, effect: { type: 'familyQuota' } });
    const error = await caught(
      client.virtualMachines
        .createOrUpdate(
          resourceGroup,
          'vm-quota',
          vmParameters('vm-quota', { hardwareProfile: { vmSize: 'Standard_D4s_v5' } }),
        )
        .submitted(),
    );
    expect(isRestError(error)).toBe(true);
    const restError = error as RestErrorLike;
    expect(restError.statusCode).toBe(409);
    expect(restError.code).toBe('OperationNotAllowed');
    expect(restError.message).toContain('exceeding approved standardDSv5Family Cores quota');
    expect(restError.message).toContain(
      'Location: westus2, Current Limit: 10, Current Usage: 8, Additional Required: 4',
    );
    expect(emulator.controls.vms()).toHaveLength(0);
  });

  it('answers SkuNotAvailable for a zone the catalog restricts for the subscription', async () => {
    const error = await caught(
      client.virtualMachines
        .createOrUpdate(
          resourceGroup,
          'vm-restricted',
          vmParameters('vm-restricted', { zones: ['3'], hardwareProfile: { vmSize: 'Standard_D16s_v5' } }),
        )
        .submitted(),
    );
    expect(error).toMatchObject({ name: 'RestError', statusCode: 409, code: 'SkuNotAvailable' });
    expect((error as Error).message).toContain("is currently not available in location 'westus2' zones '3'");
  });

  it('retries a one-shot 429 after Retry-After and succeeds', async () => {
    emulator.controls.injectFault({
      effect: { type: 'throttle', requestKind: 'putVm', retryAfterSeconds: 1 },
      times: 1,
    });
    const poller = client.virtualMachines.createOrUpdate(
      resourceGroup,
      'vm-throttled-once',
      vmParameters('vm-throttled-once'),
    );
    await poller.submitted();
    const puts = emulator.controls.requests({ kind: 'putVm' });
    expect(puts.map((r) => r.status)).toEqual([429, 201]);
    expect(puts[0]?.errorCode).toBe('OperationNotAllowed');
    expect(Date.parse(puts[1]?.time ?? '') - Date.parse(puts[0]?.time ?? '')).toBeGreaterThanOrEqual(900);
    expect((await poller.pollUntilDone()).provisioningState).toBe('Succeeded');
  });

  it('surfaces persistent throttling as a 429 RestError with Retry-After once the SDK stops retrying', async () => {
    emulator.controls.injectFault({
      effect: { type: 'throttle', requestKind: 'putVm', retryAfterSeconds: 1 },
    });
    const error = await caught(
      makeClient({ retryOptions: { maxRetries: 1 } })
        .virtualMachines.createOrUpdate(resourceGroup, 'vm-throttled', vmParameters('vm-throttled'))
        .submitted(),
    );
    expect(error).toMatchObject({ name: 'RestError', statusCode: 429, code: 'OperationNotAllowed' });
    expect((error as RestErrorLike).response?.headers.get('retry-after')).toBe('1');
    // One attempt plus the one retry allowed.
    expect(emulator.controls.requests({ kind: 'putVm' }).map((r) => r.status)).toEqual([429, 429]);
  });

  it('answers a create-only PUT (If-None-Match: *) with 201 for a new VM and 412 PreconditionFailed once it exists, whatever its state', async () => {
    const create = (name: string) =>
      client.virtualMachines
        .createOrUpdate(resourceGroup, name, vmParameters(name), { ifNoneMatch: '*' })
        .submitted();
    await create('vm-create-only');
    const error = await caught(create('vm-create-only'));
    expect(error).toMatchObject({ name: 'RestError', statusCode: 412, code: 'PreconditionFailed' });

    // A Failed VM exists too: a create-only PUT does not retry its provisioning.
    emulator.controls.injectFault({
      match: { vmName: 'vm-create-failed' },
      effect: { type: 'AllocationFailed' },
    });
    await create('vm-create-failed');
    await sleep(500);
    expect(emulator.controls.vms().find((v) => v.name === 'vm-create-failed')?.provisioningState).toBe(
      'Failed',
    );
    expect(await caught(create('vm-create-failed'))).toMatchObject({ statusCode: 412 });
    expect(emulator.controls.vms().find((v) => v.name === 'vm-create-failed')?.provisioningState).toBe(
      'Failed',
    );

    const unsupported = await raw(
      'PUT',
      `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/providers/Microsoft.Compute/virtualMachines/vm-create-etag?api-version=2026-04-01`,
      { authorization: 'Bearer x', 'if-none-match': '"some-etag"' },
      vmParameters('vm-create-etag'),
    );
    expect(unsupported.status).toBe(400);
    expect(emulator.controls.requests({ kind: 'putVm' }).map((r) => r.status)).toEqual([
      201, 412, 201, 412, 400,
    ]);
  });

  it('a hang fault withholds the answer: the client times out while the PUT took effect, or gets it late', async () => {
    const timed = createComputeClient({
      credential: fixedTokenCredential,
      subscriptionId,
      endpoint: emulator.url,
      caCertPem: emulator.caCertPem,
      requestTimeoutMs: 500,
    });
    emulator.controls.injectFault({ effect: { type: 'hang', requestKind: 'putVm' }, times: 1 });
    const started = Date.now();
    const error = await caught(
      timed.virtualMachines.createOrUpdate(resourceGroup, 'vm-hang', vmParameters('vm-hang')).submitted(),
    );
    expect((error as Error).name).toBe('AbortError');
    expect(Date.now() - started).toBeLessThan(5_000);
    // ARM accepted it: the VM exists although the client never heard.
    expect(emulator.controls.vms().map((v) => v.name)).toContain('vm-hang');
    expect(emulator.controls.requests({ kind: 'putVm' })).toMatchObject([{ status: 201, hung: true }]);

    // Not processed: nothing is created and the connection is reset after `seconds`.
    emulator.controls.injectFault({
      effect: { type: 'hang', requestKind: 'getVm', processed: false, seconds: 0.2 },
      times: 1,
    });
    const reset = await caught(
      raw(
        'GET',
        `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/providers/Microsoft.Compute/virtualMachines/vm-hang?api-version=2026-04-01`,
        { authorization: 'Bearer x' },
      ),
    );
    expect((reset as NodeJS.ErrnoException).code).toBe('ECONNRESET');
    expect(emulator.controls.requests({ kind: 'getVm' })).toMatchObject([{ status: 0, hung: true }]);

    // Answered late, within the client's patience.
    emulator.controls.injectFault({ effect: { type: 'hang', requestKind: 'getVm', seconds: 0.2 }, times: 1 });
    const lateStart = Date.now();
    const vm = await timed.virtualMachines.get(resourceGroup, 'vm-hang');
    expect(vm.name).toBe('vm-hang');
    expect(Date.now() - lateStart).toBeGreaterThanOrEqual(190);

    const bad = await raw('POST', '/admin/faults', {}, { effect: { type: 'hang' } });
    expect(bad.status).toBe(400);
  });

  it('throttles with token buckets and reports x-ms-ratelimit-remaining-resource', async () => {
    await client.virtualMachines
      .createOrUpdate(resourceGroup, 'vm-bucket', vmParameters('vm-bucket'))
      .pollUntilDone();
    // GetVM 8,000/min scaled to a bucket of 2 requests refilling 2/min (reconfiguring refills the buckets).
    emulator.controls.setThrottling({ scale: 0.00025 });
    const noRetry = makeClient({ retryOptions: { maxRetries: 0 } });
    const remaining: string[] = [];
    const onResponse = (response: { headers: { get(name: string): string | undefined } }) => {
      remaining.push(response.headers.get('x-ms-ratelimit-remaining-resource') ?? '');
    };
    await noRetry.virtualMachines.get(resourceGroup, 'vm-bucket', { onResponse });
    await noRetry.virtualMachines.get(resourceGroup, 'vm-bucket', { onResponse });
    const error = await caught(noRetry.virtualMachines.get(resourceGroup, 'vm-bucket'));
    expect(error).toMatchObject({ name: 'RestError', statusCode: 429, code: 'OperationNotAllowed' });
    expect(Number((error as RestErrorLike).response?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(remaining).toHaveLength(2);
    expect(remaining[0]).toMatch(/^Microsoft\.Compute\/GetVM3Min;1,Microsoft\.Compute\/GetVM30Min;\d+$/);
    expect(remaining[1]).toMatch(/^Microsoft\.Compute\/GetVM3Min;0,/);
  });

  it('treats a repeated identical PUT as idempotent: 200 with the current VM, no new operation', async () => {
    const first = await client.virtualMachines
      .createOrUpdate(resourceGroup, 'vm-idem', vmParameters('vm-idem'))
      .pollUntilDone();
    const lastSeq = emulator.controls.requests().at(-1)?.seq ?? 0;
    const second = await client.virtualMachines
      .createOrUpdate(resourceGroup, 'vm-idem', vmParameters('vm-idem'))
      .pollUntilDone();
    expect(second.vmId).toBe(first.vmId);
    expect(second.provisioningState).toBe('Succeeded');
    const after = emulator.controls.requests({ afterSeq: lastSeq });
    expect(after.map((r) => `${r.method} ${r.status}`)).toEqual(['PUT 200']);
  });

  it('rejects changing vmSize or zones of an existing VM with 409 PropertyChangeNotAllowed', async () => {
    await client.virtualMachines
      .createOrUpdate(resourceGroup, 'vm-immutable', vmParameters('vm-immutable'))
      .pollUntilDone();
    const resize = await caught(
      client.virtualMachines
        .createOrUpdate(
          resourceGroup,
          'vm-immutable',
          vmParameters('vm-immutable', { hardwareProfile: { vmSize: 'Standard_D4s_v5' } }),
        )
        .submitted(),
    );
    expect(resize).toMatchObject({ name: 'RestError', statusCode: 409, code: 'PropertyChangeNotAllowed' });
    const rezone = await caught(
      client.virtualMachines
        .createOrUpdate(resourceGroup, 'vm-immutable', vmParameters('vm-immutable', { zones: ['2'] }))
        .submitted(),
    );
    expect(rezone).toMatchObject({ name: 'RestError', statusCode: 409, code: 'PropertyChangeNotAllowed' });
    expect((rezone as Error).message).toContain("Changing property 'zones' is not allowed.");
  });

  it('rejects a malformed body with an ARM-style 400', async () => {
    const error = await caught(
      client.virtualMachines
        .createOrUpdate(resourceGroup, 'vm-bad', vmParameters('vm-bad', { osProfile: undefined }))
        .submitted(),
    );
    expect(error).toMatchObject({ name: 'RestError', statusCode: 400, code: 'InvalidParameter' });
    expect((error as Error).message).toContain("Required parameter 'osProfile' is missing");
  });

  it('lists resource SKUs for a location across nextLink pages, with zone restrictions', async () => {
    const skus = [];
    for await (const sku of client.resourceSkus.list({ filter: `location eq '${location}'` })) skus.push(sku);
    const expected = skuCatalog.filter((s) => s.locations.includes(location));
    expect(skus.map((s) => s.name).sort()).toEqual(expected.map((s) => s.name).sort());
    expect(emulator.controls.requests({ kind: 'listSkus' }).length).toBe(Math.ceil(expected.length / 20));

    const d16 = skus.find((s) => s.name === 'Standard_D16s_v5');
    expect(d16?.family).toBe('standardDSv5Family');
    expect(d16?.capabilities?.find((c) => c.name === 'vCPUs')?.value).toBe('16');
    expect(d16?.locationInfo?.[0]?.zones).toEqual(['1', '2', '3']);
    expect(d16?.restrictions?.[0]).toMatchObject({
      type: 'Zone',
      reasonCode: 'NotAvailableForSubscription',
      restrictionInfo: { zones: ['3'] },
    });
  });

  it('deletes a VM as an LRO (restored poller) and then answers 404 ResourceNotFound', async () => {
    const events: VmChangeEvent[] = [];
    const unsubscribe = emulator.controls.onVmChange((event) => events.push(event));
    await client.virtualMachines
      .createOrUpdate(resourceGroup, 'vm-delete', vmParameters('vm-delete'))
      .pollUntilDone();

    const poller = client.virtualMachines.delete(resourceGroup, 'vm-delete');
    await poller.submitted();
    const deletion = emulator.controls.requests({ kind: 'deleteVm' })[0];
    expect(deletion?.status).toBe(202);
    const restored = restorePoller(client, await poller.serialize(), client.virtualMachines.delete);
    await pollToCompletion(restored);

    const error = await caught(client.virtualMachines.get(resourceGroup, 'vm-delete'));
    expect(error).toMatchObject({ name: 'RestError', statusCode: 404, code: 'ResourceNotFound' });
    expect(events.map((e) => e.type)).toEqual(['creating', 'succeeded', 'deleting', 'deleted']);
    unsubscribe();

    const vms = [];
    for await (const vm of client.virtualMachines.list(resourceGroup)) vms.push(vm);
    expect(vms).toHaveLength(0);
  });

  it('retries provisioning when a Failed VM is PUT again, as Compute does', async () => {
    emulator.controls.injectFault({
      match: { vmName: 'vm-retry' },
      effect: { type: 'AllocationFailed' },
      times: 1,
    });
    const failed = await caught(
      client.virtualMachines
        .createOrUpdate(resourceGroup, 'vm-retry', vmParameters('vm-retry'))
        .pollUntilDone(),
    );
    expect((failed as Error).message).toContain('AllocationFailed');
    const vm = await client.virtualMachines
      .createOrUpdate(resourceGroup, 'vm-retry', vmParameters('vm-retry'))
      .pollUntilDone();
    expect(vm.provisioningState).toBe('Succeeded');
    expect(emulator.controls.requests({ kind: 'putVm' }).map((r) => r.status)).toEqual([201, 200]);
  });

  it('pre-empts a running creation when the VM is deleted', async () => {
    emulator.controls.setLatencies({ overrides: [{ vmName: 'vm-preempted', createMs: 5_000 }] });
    const creation = client.virtualMachines.createOrUpdate(
      resourceGroup,
      'vm-preempted',
      vmParameters('vm-preempted'),
    );
    await creation.submitted();
    const restored = restorePoller(client, await creation.serialize(), client.virtualMachines.createOrUpdate);
    await client.virtualMachines.delete(resourceGroup, 'vm-preempted').pollUntilDone();
    const error = await caught(pollToCompletion(restored));
    expect((error as Error).message).toContain('OperationPreempted');
  });

  it('holds a creation past its latency until released, in code and over the admin API', async () => {
    emulator.controls.setLatencies({ overrides: [{ vmName: 'vm-held-*', createMs: 10 }] });
    emulator.controls.holdProvisioning('vm-held-*');
    expect((await raw('PUT', '/admin/holds/vm-held-b')).status).toBe(204);
    const creations = ['vm-held-a', 'vm-held-b'].map((name) =>
      client.virtualMachines.createOrUpdate(resourceGroup, name, vmParameters(name)).pollUntilDone(),
    );
    // Both PUTs taken; a timer set now fires after their 10 ms latencies (same process): past them,
    // both creations still run.
    await eventually(() => (emulator.controls.vms().length === 2 ? true : undefined), 'both PUTs taken');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const state = (name: string) => emulator.controls.vms().find((vm) => vm.name === name)?.provisioningState;
    expect([state('vm-held-a'), state('vm-held-b')]).toEqual(['Creating', 'Creating']);
    emulator.controls.releaseProvisioning('vm-held-*');
    // vm-held-b is still held by its own hold; vm-held-a ends at once.
    expect([state('vm-held-a'), state('vm-held-b')]).toEqual(['Succeeded', 'Creating']);
    expect((await raw('DELETE', '/admin/holds/vm-held-b')).status).toBe(204);
    const [a, b] = await Promise.all(creations);
    expect([a?.provisioningState, b?.provisioningState]).toEqual(['Succeeded', 'Succeeded']);
  });

  it('lists VMs of a resource group across nextLink pages and deletes a missing VM idempotently', async () => {
    emulator.controls.setLatencies({ overrides: [{ vmName: 'vm-list-*', createMs: 10 }] });
    for (const name of ['vm-list-a', 'vm-list-b', 'vm-list-c']) {
      await client.virtualMachines.createOrUpdate(resourceGroup, name, vmParameters(name)).pollUntilDone();
    }
    const names: string[] = [];
    for await (const vm of client.virtualMachines.list(resourceGroup)) names.push(vm.name ?? '');
    expect(names).toEqual(['vm-list-a', 'vm-list-b', 'vm-list-c']);
    expect(emulator.controls.requests({ kind: 'listVms' })).toHaveLength(2);

    await client.virtualMachines.delete(resourceGroup, 'vm-never-existed').pollUntilDone();
    expect(emulator.controls.requests({ kind: 'deleteVm' }).map((r) => r.status)).toEqual([204]);
  });

  it('rejects requests without Authorization with 401, like ARM', async () => {
    const response = await raw(
      'GET',
      `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/providers/Microsoft.Compute/virtualMachines/x?api-version=2026-04-01`,
    );
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ error: { code: 'AuthenticationFailed' } });
    expect(response.headers['www-authenticate']).toContain('Bearer');
  });

  it('offers the same controls over the /admin/ HTTP API', async () => {
    const created = await raw(
      'POST',
      '/admin/faults',
      {},
      {
        match: { vmName: 'vm-admin-*', priority: 'Spot' },
        effect: { type: 'lowPriorityQuota' },
        times: 1,
      },
    );
    expect(created.status).toBe(201);
    const error = await caught(
      client.virtualMachines
        .createOrUpdate(
          resourceGroup,
          'vm-admin-spot',
          vmParameters('vm-admin-spot', { priority: 'Spot', evictionPolicy: 'Delete' }),
        )
        .submitted(),
    );
    expect(error).toMatchObject({ statusCode: 409, code: 'OperationNotAllowed' });
    expect((error as Error).message).toContain('Total Regional Low-priority vCPUs quota');

    expect((await raw('PUT', '/admin/latencies', {}, { createMs: 50 })).body).toMatchObject({ createMs: 50 });
    await client.virtualMachines
      .createOrUpdate(
        resourceGroup,
        'vm-admin-spot',
        vmParameters('vm-admin-spot', { priority: 'Spot', evictionPolicy: 'Delete' }),
      )
      .pollUntilDone();
    const vms = (await raw('GET', '/admin/vms')).body as {
      value: Array<{ name: string; priority: string; customData: string }>;
    };
    expect(vms.value).toMatchObject([{ name: 'vm-admin-spot', priority: 'Spot' }]);
    expect(vms.value[0]?.customData).toBeTruthy();

    const log = (await raw('GET', '/admin/requests?kind=putVm')).body as { value: Array<{ status: number }> };
    expect(log.value.map((r) => r.status)).toEqual([409, 201]);
    expect((await raw('POST', '/admin/reset')).status).toBe(204);
    expect(((await raw('GET', '/admin/vms')).body as { value: unknown[] }).value).toHaveLength(0);
  });
});

describe('trusting the emulator through NODE_EXTRA_CA_CERTS (the Function App route)', () => {
  const execFileAsync = promisify(execFile);
  // A separate Node process, because Node reads NODE_EXTRA_CA_CERTS only at start-up. The client here
  // has no tlsOptions, exactly like the app's.
  const script = `
    import { ComputeManagementClient } from '@azure/arm-compute';
    const credential = { getToken: async () => ({ token: 't', expiresOnTimestamp: Date.now() + 60000 }) };
    const client = new ComputeManagementClient(credential, 'sub', { endpoint: process.env.ARM_ENDPOINT, retryOptions: { maxRetries: 0 } });
    try {
      for await (const sku of client.resourceSkus.list()) { console.log('first sku ' + sku.name); break; }
    } catch (error) {
      console.log('failed ' + (error.code ?? error.message));
    }
  `;

  async function runChild(extraCa: string | undefined): Promise<string> {
    const env: NodeJS.ProcessEnv = { ...process.env, ARM_ENDPOINT: emulator.url };
    delete env.NODE_EXTRA_CA_CERTS;
    if (extraCa) env.NODE_EXTRA_CA_CERTS = extraCa;
    const { stdout } = await execFileAsync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: process.cwd(),
      env,
      timeout: 30_000,
    });
    return stdout.trim();
  }

  it('works with the CA in NODE_EXTRA_CA_CERTS and fails without it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'arm-emulator-ca-'));
    try {
      const caPath = join(dir, 'ca.crt');
      await writeFile(caPath, emulator.caCertPem);
      expect(await runChild(caPath)).toBe('first sku Standard_D2s_v5');
      expect(await runChild(undefined)).toMatch(
        /^failed (UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
