// The one conflict-retry loop: a 409 re-reads and recomputes, anything else is thrown at once, the object
// going away ends the loop, and a conflict that persists is thrown after CONFLICT_ATTEMPTS writes.
import { describe, expect, it } from 'vitest';
import { CONFLICT_ATTEMPTS, retryOnConflict } from '../../shared/kube/retry-on-conflict.js';

const conflict = Object.assign(new Error('the object has been modified'), { code: 409 });
const serverError = Object.assign(new Error('internal'), { code: 500 });

describe('retryOnConflict', () => {
  it('recomputes from the re-read object after a conflict', async () => {
    const seen: number[] = [];
    const result = await retryOnConflict(
      1,
      async (version) => {
        seen.push(version);
        if (version < 3) throw conflict;
        return `written from ${version}`;
      },
      async (stale) => stale + 1,
    );
    expect(result).toBe('written from 3');
    expect(seen).toEqual([1, 2, 3]);
  });

  it('returns undefined when the re-read finds the object gone', async () => {
    const result = await retryOnConflict(
      1,
      async () => {
        throw conflict;
      },
      async () => undefined,
    );
    expect(result).toBeUndefined();
  });

  it('throws anything but a conflict without re-reading', async () => {
    let rereads = 0;
    await expect(
      retryOnConflict(
        1,
        async () => {
          throw serverError;
        },
        async (stale) => {
          rereads += 1;
          return stale;
        },
      ),
    ).rejects.toBe(serverError);
    expect(rereads).toBe(0);
  });

  it(`gives up after ${CONFLICT_ATTEMPTS} writes and throws the conflict`, async () => {
    let writes = 0;
    await expect(
      retryOnConflict(
        1,
        async () => {
          writes += 1;
          throw conflict;
        },
        async (stale) => stale,
      ),
    ).rejects.toBe(conflict);
    expect(writes).toBe(CONFLICT_ATTEMPTS);
  });
});
