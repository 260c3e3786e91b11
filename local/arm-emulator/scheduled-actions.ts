// The emulator's pending state transitions (a creation ending, a restart finishing, an eviction): timers
// that stop and reset cancel all at once.
export class ScheduledActions {
  private readonly timers = new Set<NodeJS.Timeout>();

  schedule(delayMs: number, action: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      action();
    }, delayMs);
    this.timers.add(timer);
  }

  cancelAll(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
