// Waiting for the cluster to reach a state, for tests whose probes must not fail: unlike `eventually` in
// launch-stack.ts, which waits out a probe that throws, a throwing probe here fails the wait at once.

/** Calls `probe` every 100 ms until it returns something other than undefined, and returns that. */
export async function pollUntilDefined<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
