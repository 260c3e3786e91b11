// Counts units of work in progress (handler invocations, orchestration episodes, activity runs) so the
// host can stop gracefully and tests can wait until nothing is left to do.

export interface WorkTracker {
  /** Marks one unit of work as started; call the returned function exactly once when it ends. */
  begin(): () => void;
  readonly busy: number;
  /** Increases every time work begins; unchanged across an interval means nothing started meanwhile. */
  readonly started: number;
  /** Resolves the next time no work is in progress (at once if none is). */
  drained(): Promise<void>;
}

export function createWorkTracker(): WorkTracker {
  let busy = 0;
  let started = 0;
  let waiters: (() => void)[] = [];
  return {
    begin: () => {
      busy += 1;
      started += 1;
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        busy -= 1;
        if (busy === 0) {
          const ready = waiters;
          waiters = [];
          for (const resolve of ready) resolve();
        }
      };
    },
    get busy() {
      return busy;
    },
    get started() {
      return started;
    },
    drained: () => (busy === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve))),
  };
}
