// The compressed day: simulated hours on the wall clock. The day's plan is written in simulated hours
// (the morning ramp, business hours, the night); the stack's own latencies (VM creation, the sweep) are
// set separately by --speed and are not stretched by the compression. Pure.

export interface DayClock {
  /** Date.now() at simulated 00:00. */
  readonly startedAt: number;
  /** Wall milliseconds one simulated hour takes. */
  readonly msPerHour: number;
  /** The simulated hour (fractional) at a wall time. */
  hourAt(wallMs: number): number;
  /** The wall time of a simulated hour. */
  wallAt(hour: number): number;
}

export function dayClock(startedAt: number, dayMinutes: number): DayClock {
  if (!(dayMinutes > 0)) throw new Error(`the day must last a positive number of minutes, got ${dayMinutes}`);
  const msPerHour = (dayMinutes * 60_000) / 24;
  return {
    startedAt,
    msPerHour,
    hourAt: (wallMs) => (wallMs - startedAt) / msPerHour,
    wallAt: (hour) => startedAt + hour * msPerHour,
  };
}

/** "07:30" */
export function formatHour(hour: number): string {
  const minutes = Math.round(hour * 60);
  const h = Math.floor(minutes / 60);
  return `${String(h).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}
