// The lifecycle's one NodeClaim writer against the fake store (which answers a stale resourceVersion with
// 409, as the API server does): a conflict re-reads and re-applies the phase's function and keeps what
// the other writer wrote; a NodeClaim gone (404, or another under the same name) is `gone`; nothing
// changed writes nothing; a change of metadata and status is two guarded writes in the stated order, and
// a conflict on the second never writes the first part twice.
import { beforeEach, describe, expect, test } from 'vitest';
import type { KarpenterObjects } from '../../../shared/kube/custom-objects.js';
import {
  writeNodeClaim,
  type NodeClaimState,
} from '../../../shared/lifecycle/nodeclaims/nodeclaim-writes.js';
import type { NodeClaim } from '../../../shared/models/karpenter.js';
import { FakeApiError } from '../../support/fake-api-error.js';
import { fakeLifecycle, type FakeLifecycle } from '../../support/fake-lifecycle.js';
import { nodeClaim } from '../registration-fixtures.js';

const NAME = 'default-abcde';

/** Sets an annotation: what a phase's function looks like. */
const annotate =
  (key: string, value: string) =>
  (current: NodeClaim): NodeClaimState => ({
    annotations: { ...current.metadata.annotations, [key]: value },
  });

/** The fake's objects, with `before` run once ahead of the first status write (a concurrent writer). */
function interleaved(fake: FakeLifecycle, before: () => Promise<unknown>): KarpenterObjects {
  let pending = true;
  const store = fake.deps.objects.nodeClaims;
  const nodeClaims = Object.create(store) as typeof store;
  nodeClaims.mergePatchStatus = async (name: string, patch: object) => {
    if (pending) {
      pending = false;
      await before();
    }
    return store.mergePatchStatus(name, patch);
  };
  return { ...fake.deps.objects, nodeClaims };
}

describe('writeNodeClaim', () => {
  let fake: FakeLifecycle;
  let read: NodeClaim;
  beforeEach(() => {
    fake = fakeLifecycle();
    read = fake.nodeClaims.seed(nodeClaim({ name: NAME, annotations: { keep: 'me' } }));
  });

  test('a conflict re-reads and re-applies: the other writer’s change is kept, ours written once', async () => {
    await fake.nodeClaims.mergePatch(NAME, { metadata: { annotations: { other: 'writer' } } });
    const write = await writeNodeClaim(fake.deps.objects, read, annotate('ours', 'yes'));
    expect(write.outcome).toBe('written');
    const stored = fake.nodeClaims.peek(NAME);
    expect(stored?.metadata.annotations).toEqual({ keep: 'me', other: 'writer', ours: 'yes' });
    // The other writer's patch, then ours: the refused one is not in the store's log.
    expect(fake.nodeClaims.writes).toEqual([
      { verb: 'patch', name: NAME },
      { verb: 'patch', name: NAME },
    ]);
    if (write.outcome === 'written') {
      expect(write.nodeClaim).toEqual(stored);
      expect(write.before.metadata.annotations?.other).toBe('writer');
    }
  });

  test('unchanged writes nothing and answers the NodeClaim as read', async () => {
    const write = await writeNodeClaim(fake.deps.objects, read, (current) => ({
      status: { ...current.status },
      annotations: { ...current.metadata.annotations },
      labels: { ...current.metadata.labels },
      finalizers: current.metadata.finalizers ?? [],
    }));
    expect(write).toEqual({ outcome: 'unchanged', nodeClaim: read });
    expect(fake.nodeClaims.writes).toEqual([]);
  });

  test('a deleted NodeClaim is gone, on the first write or after a conflict', async () => {
    await fake.nodeClaims.delete(NAME);
    expect(await writeNodeClaim(fake.deps.objects, read, annotate('a', 'b'))).toEqual({ outcome: 'gone' });

    const again = fake.nodeClaims.seed(nodeClaim({ name: NAME }));
    const objects = interleaved(fake, () => fake.nodeClaims.delete(NAME));
    const write = await writeNodeClaim(objects, again, (current) => ({
      status: { ...current.status, nodeName: 'n' },
    }));
    expect(write).toEqual({ outcome: 'gone' });
  });

  test('another NodeClaim under the same name is gone, never written', async () => {
    await fake.nodeClaims.delete(NAME);
    fake.nodeClaims.seed(nodeClaim({ name: NAME, uid: 'uid-the-next-one' }));
    const write = await writeNodeClaim(fake.deps.objects, read, annotate('a', 'b'));
    expect(write).toEqual({ outcome: 'gone' });
    expect(fake.nodeClaims.peek(NAME)?.metadata.annotations).toBeUndefined();
  });

  test('a 404 from the API server is gone', async () => {
    const store = fake.deps.objects.nodeClaims;
    const nodeClaims = Object.create(store) as typeof store;
    nodeClaims.mergePatch = () => Promise.reject(new FakeApiError(404, 'not found'));
    const objects: KarpenterObjects = { ...fake.deps.objects, nodeClaims };
    expect(await writeNodeClaim(objects, read, annotate('a', 'b'))).toEqual({ outcome: 'gone' });
  });

  test('status and metadata in one step: metadata first, then status guarded by its version', async () => {
    const write = await writeNodeClaim(fake.deps.objects, read, (current) => ({
      annotations: { ...current.metadata.annotations, step: 'done' },
      finalizers: ['karpenter.sh/termination'],
      status: { ...current.status, nodeName: 'aks-default-abcde' },
    }));
    expect(write.outcome).toBe('written');
    expect(fake.nodeClaims.writes.map((w) => w.verb)).toEqual(['patch', 'patchStatus']);
    const stored = fake.nodeClaims.peek(NAME);
    expect(stored?.metadata.annotations).toEqual({ keep: 'me', step: 'done' });
    expect(stored?.metadata.finalizers).toEqual(['karpenter.sh/termination']);
    expect(stored?.status?.nodeName).toBe('aks-default-abcde');
  });

  test("`last: 'metadata'` writes the status first", async () => {
    await writeNodeClaim(
      fake.deps.objects,
      read,
      (current) => ({
        annotations: { ...current.metadata.annotations, digest: 'x' },
        status: { ...current.status, lastPodEventTime: '2026-12-01T00:00:00Z' },
      }),
      { last: 'metadata' },
    );
    expect(fake.nodeClaims.writes.map((w) => w.verb)).toEqual(['patchStatus', 'patch']);
  });

  test('a conflict on the status write re-applies the status only: a count in the metadata counts once', async () => {
    const objects = interleaved(fake, () =>
      fake.nodeClaims.mergePatch(NAME, { metadata: { labels: { concurrent: 'yes' } } }),
    );
    const write = await writeNodeClaim(objects, read, (current) => ({
      annotations: {
        ...current.metadata.annotations,
        attempts: String(Number(current.metadata.annotations?.attempts ?? '0') + 1),
      },
      status: { ...current.status, nodeName: 'n' },
    }));
    expect(write.outcome).toBe('written');
    const stored = fake.nodeClaims.peek(NAME);
    expect(stored?.metadata.annotations?.attempts).toBe('1');
    expect(stored?.metadata.labels?.concurrent).toBe('yes');
    expect(stored?.status?.nodeName).toBe('n');
    expect(fake.nodeClaims.writes.map((w) => w.verb)).toEqual(['patch', 'patch', 'patchStatus']);
  });

  test('removed keys go as null: a label, an annotation, a status field', async () => {
    const write = await writeNodeClaim(fake.deps.objects, read, (current) => {
      const { providerID: _cleared, ...status } = current.status ?? {};
      return { annotations: {}, labels: {}, status };
    });
    expect(write.outcome).toBe('written');
    const stored = fake.nodeClaims.peek(NAME);
    expect(stored?.metadata.annotations ?? {}).toEqual({});
    expect(stored?.metadata.labels ?? {}).toEqual({});
    expect(stored?.status?.providerID).toBeUndefined();
  });

  test('without retries a conflict is thrown to the caller', async () => {
    await fake.nodeClaims.mergePatch(NAME, { metadata: { annotations: { other: 'writer' } } });
    await expect(
      writeNodeClaim(fake.deps.objects, read, annotate('a', 'b'), { retryConflicts: false }),
    ).rejects.toMatchObject({ code: 409 });
  });
});
