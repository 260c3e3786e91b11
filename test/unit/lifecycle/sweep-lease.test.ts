// The sweep's singleton against in-memory fakes: a sweep runs only while it holds the cluster Lease,
// returns at once while another holder's lease is unexpired, takes over an expired one, and gives the
// lease up when it ends, failed or not, so the next sweep need not wait for it to expire. The real Lease
// (guarded writes, concurrent contenders) is tested in test/integration/sweep.test.ts.
import { beforeEach, describe, expect, test } from 'vitest';
import { DEFAULT_SWEEP_LEASE, runLifecycleSweep } from '../../../shared/lifecycle/sweep/sweep.js';
import type { SweepStep } from '../../../shared/lifecycle/sweep-step/sweep-step.js';
import { silentLogger } from '../../../shared/observability/logger.js';
import {
  FAKE_NOW,
  fakeLifecycle,
  FakeOrchestrations,
  type FakeLifecycle,
} from '../../support/fake-lifecycle.js';

const lease = { name: DEFAULT_SWEEP_LEASE.name, namespace: 'nodeclaim-system', durationSeconds: 30 };
const secondsAgo = (seconds: number) => new Date(FAKE_NOW.getTime() - seconds * 1000);

describe('the sweep lease', () => {
  let fake: FakeLifecycle;
  let ran: number;
  const counting: SweepStep = {
    name: 'counting',
    run: async () => {
      ran += 1;
      return { step: 'counting', examined: 0, acted: 0, failed: 0 };
    },
  };
  beforeEach(() => {
    fake = fakeLifecycle();
    ran = 0;
    fake.deps.cluster = {
      ...fake.deps.cluster,
      read: async () => ({ nodeClaims: [], nodes: [], nodePools: [], nodeClasses: [] }),
    };
  });

  const sweep = () =>
    runLifecycleSweep(
      fake.deps,
      { orchestrations: new FakeOrchestrations(), log: silentLogger },
      { lease, steps: [counting] },
    );

  test('runs the steps holding the lease, and releases it at the end', async () => {
    expect(await sweep()).toMatchObject({ status: 'completed', steps: [{ step: 'counting' }] });

    expect(ran).toBe(1);
    expect(fake.leases.acquisitions).toHaveLength(1);
    expect(fake.leases.record).toBeUndefined();
  });

  test('returns at once while another holder’s lease is unexpired', async () => {
    fake.leases.holdFor('other-app', secondsAgo(29), 30);

    expect(await sweep()).toEqual({ status: 'skipped', reason: 'the sweep lease is held by other-app' });
    expect(ran).toBe(0);
    expect(fake.leases.record?.holderIdentity).toBe('other-app');
  });

  test('takes over a lease whose holder stopped renewing it', async () => {
    fake.leases.holdFor('crashed-app', secondsAgo(30), 30);

    expect((await sweep()).status).toBe('completed');
    expect(ran).toBe(1);
  });

  test('a sweep that fails still releases the lease', async () => {
    fake.deps.cluster = { ...fake.deps.cluster, read: () => Promise.reject(new Error('API server down')) };

    await expect(sweep()).rejects.toThrow('API server down');
    expect(fake.leases.acquisitions).toHaveLength(1);
    expect(fake.leases.record).toBeUndefined();
  });

  test('consecutive sweeps each take and release the lease', async () => {
    await sweep();
    await sweep();

    expect(ran).toBe(2);
    expect(fake.leases.acquisitions).toHaveLength(2);
  });
});
