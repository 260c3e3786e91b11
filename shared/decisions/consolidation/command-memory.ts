// The memory of consolidation commands that failed (the replacement was refused or never initialized, or
// validation found the simulation changed its mind), kept on the NodePool so it survives a restart of the
// Function App. Without it the sweep decides the same command again a few seconds later, taints the same
// working node again, and fails the same way: the churn loop. A failed command is held for a backoff that
// doubles with each failure in the NodePool (up to 8× the base) and is reset by a command that succeeds;
// a command that differs in anything it depends on (candidates, decision, the instance types it may
// launch, which change when a blocked offering is released) is a different command and is not held.
export const CONSOLIDATION_FAILURES_ANNOTATION = 'karpenter.azure.com/consolidation-failures';

/** How many failed commands one NodePool remembers; older ones are dropped first. */
export const MAX_REMEMBERED_COMMANDS = 20;
const MAX_BACKOFF_FACTOR = 8;

export interface FailedCommand {
  /** commandKey of the command (underutilized.ts). */
  key: string;
  /** Not issued again before this RFC 3339 time. */
  until: string;
  why: string;
}

export interface CommandMemory {
  /** Consecutive failures in the NodePool since the last command that succeeded. */
  failures: number;
  commands: FailedCommand[];
}

const EMPTY: CommandMemory = { failures: 0, commands: [] };

function isFailedCommand(value: unknown): value is FailedCommand {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return (
    typeof record.key === 'string' &&
    typeof record.until === 'string' &&
    !Number.isNaN(Date.parse(record.until)) &&
    typeof record.why === 'string'
  );
}

/** The annotation's memory; an unreadable one (edited by hand) counts as empty rather than blocking. */
export function parseCommandMemory(text: string | undefined): CommandMemory {
  if (!text) return EMPTY;
  try {
    const parsed = JSON.parse(text) as { failures?: unknown; commands?: unknown };
    const failures =
      typeof parsed.failures === 'number' && Number.isInteger(parsed.failures) && parsed.failures > 0
        ? parsed.failures
        : 0;
    const commands = Array.isArray(parsed.commands) ? parsed.commands.filter(isFailedCommand) : [];
    return { failures, commands };
  } catch {
    return EMPTY;
  }
}

/** Keys of the commands still held at `now`. */
export function heldCommandKeys(memory: CommandMemory, now: Date): Set<string> {
  return new Set(memory.commands.filter((c) => Date.parse(c.until) > now.getTime()).map((c) => c.key));
}

/** The hold for the failures-th consecutive failure: the base, doubled per failure, at most 8×. */
export function backoffMs(failures: number, baseMs: number): number {
  return baseMs * Math.min(MAX_BACKOFF_FACTOR, 2 ** Math.max(0, failures - 1));
}

/** The memory after one more failure of the command `key`; expired entries are dropped. */
export function rememberFailedCommand(
  memory: CommandMemory,
  failure: { key: string; why: string },
  now: Date,
  baseBackoffMs: number,
): CommandMemory {
  const failures = memory.failures + 1;
  const until = new Date(now.getTime() + backoffMs(failures, baseBackoffMs)).toISOString();
  const kept = memory.commands.filter((c) => c.key !== failure.key && Date.parse(c.until) > now.getTime());
  const commands = [...kept, { key: failure.key, until, why: failure.why.slice(0, 500) }];
  return { failures, commands: commands.slice(-MAX_REMEMBERED_COMMANDS) };
}

export function serializeCommandMemory(memory: CommandMemory): string {
  return JSON.stringify(memory);
}
