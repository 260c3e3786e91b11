// vCPU quota as state in the ARM emulator, through the real @azure/arm-compute client: the usages API
// (`client.usage.list`) shows what the VMs hold, and a PUT that would exceed a limit is refused with the
// same figures. The emulator runs in this process on loopback (no control plane), so the file lives with
// the unit tests.
import { RestError, type ComputeManagementClient, type Usage, type VirtualMachine } from '@azure/arm-compute';
import { emulatorRequest } from '../../support/emulator-request.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { skuCatalog, startArmEmulator, type ArmEmulator } from '../../../local/arm-emulator/index.js';
import { emulatorComputeClient, linuxVmParameters } from '../../support/arm-client.js';

const subscriptionId = '00000000-0000-0000-0000-0000000000a1';
const resourceGroup = 'rg-quota';
const location = 'westus2';

let emulator: ArmEmulator;
let client: ComputeManagementClient;

beforeAll(async () => {
  emulator = await startArmEmulator({
    latencies: { createMs: 20, deleteMs: 20, retryAfterSeconds: 0.05 },
    pageSizes: { usages: 4 },
  });
  client = emulatorComputeClient(emulator, subscriptionId);
});

afterAll(async () => {
  await emulator?.stop();
});

beforeEach(() => {
  emulator.controls.reset();
  emulator.controls.setLatencies({ createMs: 20, deleteMs: 20, retryAfterSeconds: 0.05 });
});

/** Polls as often as the short latencies allow (the SDK's default waits 2 s a poll). */
const fast = { updateIntervalInMs: 20 };

function vm(name: string, vmSize: string, priority: 'Regular' | 'Spot' = 'Regular'): VirtualMachine {
  return {
    ...linuxVmParameters({ name, subscriptionId, resourceGroup, location, zone: '1', vmSize, tags: {} }),
    ...(priority === 'Spot' ? { priority: 'Spot', evictionPolicy: 'Delete' } : {}),
  };
}

const create = (name: string, vmSize: string, priority: 'Regular' | 'Spot' = 'Regular') =>
  client.virtualMachines.beginCreateOrUpdateAndWait(resourceGroup, name, vm(name, vmSize, priority), fast);

async function usages(where = location): Promise<Usage[]> {
  const all: Usage[] = [];
  for await (const usage of client.usage.list(where)) all.push(usage);
  return all;
}

async function usageOf(name: string): Promise<{ currentValue: number; limit: number }> {
  const usage = (await usages()).find((u) => u.name.value === name);
  if (!usage) throw new Error(`no usage ${name}`);
  return { currentValue: usage.currentValue, limit: usage.limit };
}

async function refusal(promise: Promise<unknown>): Promise<RestError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RestError) return error;
    throw error;
  }
  throw new Error('the request was not refused');
}

function raw(method: string, path: string, body?: unknown) {
  return emulatorRequest(emulator, method, path, {
    headers: { authorization: 'Bearer x' },
    ...(body !== undefined ? { body } : {}),
  });
}

const usagesPath = `/subscriptions/${subscriptionId}/providers/Microsoft.Compute/locations/${location}/usages?api-version=2026-04-01`;

describe('the usages API', () => {
  it('lists cores, the VM count, every catalog family there and low-priority cores, paged with nextLink', async () => {
    const all = await usages();
    const families = [
      ...new Set(skuCatalog.filter((s) => s.locations.includes(location)).map((s) => s.family)),
    ];
    expect(all.map((u) => u.name.value)).toEqual([
      'cores',
      'virtualMachines',
      ...families,
      'lowPriorityCores',
    ]);
    expect(all.find((u) => u.name.value === 'cores')).toEqual({
      unit: 'Count',
      currentValue: 0,
      limit: 10_000,
      name: { value: 'cores', localizedValue: 'Total Regional vCPUs' },
    });
    expect(all.find((u) => u.name.value === 'standardDSv5Family')?.name.localizedValue).toBe(
      'Standard DSv5 Family vCPUs',
    );
    expect(all.find((u) => u.name.value === 'lowPriorityCores')?.name.localizedValue).toBe(
      'Total Regional Low-priority vCPUs',
    );
    // Four a page: the SDK followed the nextLinks.
    expect(emulator.controls.requests({ kind: 'listUsages' }).length).toBe(Math.ceil(all.length / 4));
    expect(emulator.controls.quotaUsages(location, subscriptionId)).toEqual(all);
  });

  it('answers an unknown location with 400 LocationNotAvailableForResourceType', async () => {
    const error = await refusal(usages('nowhere'));
    expect(error).toMatchObject({ statusCode: 400, code: 'LocationNotAvailableForResourceType' });
  });

  it('needs Microsoft.Compute/locations/usages/read at the location scope', async () => {
    const scope = `/subscriptions/${subscriptionId}/providers/Microsoft.Compute/locations/${location}`;
    emulator.controls.setAuthorization({
      principalId: 'app',
      assignments: [
        {
          roleName: 'VMs only',
          actions: ['Microsoft.Compute/virtualMachines/*'],
          scope: `/subscriptions/${subscriptionId}`,
        },
      ],
    });
    try {
      const error = await refusal(usages());
      expect(error).toMatchObject({ statusCode: 403, code: 'AuthorizationFailed' });
      // The SDK's paging error keeps only the status; the body names the action and scope.
      const answer = await raw('GET', usagesPath);
      expect(answer.body).toMatchObject({ error: { code: 'AuthorizationFailed' } });
      expect(JSON.stringify(answer.body)).toContain(
        `perform action 'Microsoft.Compute/locations/usages/read' over scope '${scope}'`,
      );
      emulator.controls.setAuthorization({
        principalId: 'app',
        assignments: [{ roleName: 'usages', actions: ['Microsoft.Compute/locations/usages/read'], scope }],
      });
      expect((await usages()).length).toBeGreaterThan(3);
    } finally {
      emulator.controls.setAuthorization(undefined);
    }
  });

  it('is throttled on its own bucket, with the rate-limit header', async () => {
    const first = await raw('GET', usagesPath);
    expect(first.status).toBe(200);
    expect(String(first.headers['x-ms-ratelimit-remaining-resource'])).toContain(
      'Microsoft.Compute/ListUsages3Min;249',
    );
    emulator.controls.setThrottling({
      policies: { listUsages: { name: 'ListUsages', refillPerMinute: 1, capacity: 1 } },
    });
    expect((await raw('GET', usagesPath)).status).toBe(200);
    const throttled = await raw('GET', usagesPath);
    expect(throttled.status).toBe(429);
    expect(throttled.body).toMatchObject({ error: { code: 'OperationNotAllowed' } });
  });
});

describe('vCPU quota as state', () => {
  it('a family limit lowered to the usage shows in usages, and the next PUT gets the family error with the real figures', async () => {
    await create('q-d2-a', 'Standard_D2s_v5');
    await create('q-d2-b', 'Standard_D2s_v5');
    emulator.controls.setQuotaLimit({ location, name: 'standardDSv5Family', limit: 4 });
    expect(await usageOf('standardDSv5Family')).toEqual({ currentValue: 4, limit: 4 });
    expect(await usageOf('cores')).toEqual({ currentValue: 4, limit: 10_000 });
    expect(await usageOf('virtualMachines')).toEqual({ currentValue: 2, limit: 25_000 });

    const error = await refusal(create('q-d4', 'Standard_D4s_v5'));
    expect(error).toMatchObject({ statusCode: 409, code: 'OperationNotAllowed' });
    expect(error.message).toContain('exceeding approved standardDSv5Family Cores quota');
    expect(error.message).toContain(
      'Location: westus2, Current Limit: 4, Current Usage: 4, Additional Required: 4, (Minimum) New Limit Required: 8.',
    );
    expect(
      emulator.controls
        .vms()
        .map((v) => v.name)
        .sort(),
    ).toEqual(['q-d2-a', 'q-d2-b']);
    // Another family is not affected.
    await create('q-e2', 'Standard_E2s_v5');
    expect(await usageOf('standardESv5Family')).toEqual({ currentValue: 2, limit: 10_000 });
  });

  it('refuses past the regional vCPUs with Total Regional Cores', async () => {
    emulator.controls.setQuotaLimit({ name: 'cores', limit: 6 });
    await create('q-r-1', 'Standard_D4s_v5');
    const error = await refusal(create('q-r-2', 'Standard_E4s_v5'));
    expect(error.message).toContain('exceeding approved Total Regional Cores quota');
    expect(error.message).toContain('Current Limit: 6, Current Usage: 4, Additional Required: 4');
  });

  it('counts spot VMs only against the low-priority vCPUs', async () => {
    await create('q-spot-1', 'Standard_D4s_v5', 'Spot');
    expect(await usageOf('lowPriorityCores')).toEqual({ currentValue: 4, limit: 10_000 });
    expect(await usageOf('cores')).toEqual({ currentValue: 0, limit: 10_000 });
    expect(await usageOf('standardDSv5Family')).toEqual({ currentValue: 0, limit: 10_000 });

    emulator.controls.setQuotaLimit({ location, name: 'lowPriorityCores', limit: 4 });
    const error = await refusal(create('q-spot-2', 'Standard_D2s_v5', 'Spot'));
    expect(error.message).toContain('exceeding approved Total Regional Low-priority vCPUs quota');
    expect(error.message).toContain('Current Limit: 4, Current Usage: 4, Additional Required: 2');
    // On-demand capacity is a different quota.
    emulator.controls.setQuotaLimit({ location, name: 'standardDSv5Family', limit: 2 });
    await create('q-regular', 'Standard_D2s_v5');
  });

  it('a VM holds its cores while it is being deleted and frees them when it is gone', async () => {
    emulator.controls.setQuotaLimit({ location, name: 'cores', limit: 4 });
    await create('q-del', 'Standard_D4s_v5');
    expect((await refusal(create('q-next', 'Standard_D4s_v5'))).message).toContain('Total Regional Cores');

    emulator.controls.setLatencies({ deleteMs: 300 });
    const deletion = await client.virtualMachines.beginDelete(resourceGroup, 'q-del', fast);
    expect(emulator.controls.vms()[0]?.provisioningState).toBe('Deleting');
    expect(await usageOf('cores')).toEqual({ currentValue: 4, limit: 4 });
    await deletion.pollUntilDone();
    expect(await usageOf('cores')).toEqual({ currentValue: 0, limit: 4 });
    await create('q-next', 'Standard_D4s_v5');
  });

  it('a VM whose creation failed holds no cores', async () => {
    emulator.controls.injectFault({
      match: { vmName: 'q-failed' },
      effect: { type: 'ZonalAllocationFailed' },
    });
    await expect(create('q-failed', 'Standard_D4s_v5')).rejects.toThrow(/ZonalAllocationFailed/);
    expect(await usageOf('cores')).toEqual({ currentValue: 0, limit: 10_000 });
    expect(await usageOf('virtualMachines')).toEqual({ currentValue: 1, limit: 25_000 });
  });

  it('rejects an unknown quota name or a negative limit', () => {
    expect(() => emulator.controls.setQuotaLimit({ name: 'standardXYZFamily', limit: 1 })).toThrow(
      /unknown quota/,
    );
    expect(() => emulator.controls.setQuotaLimit({ name: 'cores', limit: -1 })).toThrow(/whole number/);
  });

  it('reset restores the default limits', async () => {
    emulator.controls.setQuotaLimit({ name: 'cores', limit: 1 });
    emulator.controls.reset();
    expect(await usageOf('cores')).toEqual({ currentValue: 0, limit: 10_000 });
  });
});

describe('quota fault rules in the usages API', () => {
  it('a familyQuota rule for a size shows its family with no room left', async () => {
    await create('q-f-1', 'Standard_D2s_v5');
    emulator.controls.injectFault({ match: { vmSize: 'Standard_D4s_v5' }, effect: { type: 'familyQuota' } });
    expect(await usageOf('standardDSv5Family')).toEqual({ currentValue: 2, limit: 2 });
    expect(await usageOf('standardESv5Family')).toEqual({ currentValue: 0, limit: 10_000 });
    // The rule itself still answers as before, with its placeholder figures.
    const error = await refusal(create('q-f-2', 'Standard_D4s_v5'));
    expect(error.message).toContain('Current Limit: 10, Current Usage: 8, Additional Required: 4');
  });

  it('figures a rule states are reported as stated', async () => {
    emulator.controls.injectFault({
      effect: { type: 'regionalQuota', currentLimit: 24, currentUsage: 24 },
    });
    emulator.controls.injectFault({ effect: { type: 'lowPriorityQuota', currentLimit: 12 } });
    expect(await usageOf('cores')).toEqual({ currentValue: 24, limit: 24 });
    expect(await usageOf('lowPriorityCores')).toEqual({ currentValue: 12, limit: 12 });
    const error = await refusal(create('q-s-1', 'Standard_D2s_v5'));
    expect(error.message).toContain('Total Regional Cores quota');
    expect(error.message).toContain('Current Limit: 24, Current Usage: 24, Additional Required: 2');
  });

  it('a rule narrowed to a VM name or a zone, or another location, does not show', async () => {
    emulator.controls.injectFault({ match: { vmName: 'special-*' }, effect: { type: 'regionalQuota' } });
    emulator.controls.injectFault({ match: { zone: '2' }, effect: { type: 'lowPriorityQuota' } });
    emulator.controls.injectFault({ match: { location: 'eastus' }, effect: { type: 'familyQuota' } });
    expect(await usageOf('cores')).toEqual({ currentValue: 0, limit: 10_000 });
    expect(await usageOf('lowPriorityCores')).toEqual({ currentValue: 0, limit: 10_000 });
    expect(await usageOf('standardDSv5Family')).toEqual({ currentValue: 0, limit: 10_000 });
    expect(
      emulator.controls
        .quotaUsages('eastus', subscriptionId)
        .find((u) => u.name.value === 'standardDSv5Family'),
    ).toMatchObject({ currentValue: 0, limit: 0 });
  });
});

describe('the admin API', () => {
  it('sets a limit and reads the usages', async () => {
    const set = await raw('PUT', '/admin/quotas', { location, name: 'standardFSv2Family', limit: 16 });
    expect(set.status).toBe(204);
    const read = await raw('GET', `/admin/quotas/${location}?subscriptionId=${subscriptionId}`);
    expect(read.status).toBe(200);
    expect(
      (read.body as { value: Usage[] }).value.find((u) => u.name.value === 'standardFSv2Family'),
    ).toMatchObject({
      currentValue: 0,
      limit: 16,
    });
    expect((await raw('PUT', '/admin/quotas', { name: 'nope', limit: 1 })).status).toBe(400);
  });
});
