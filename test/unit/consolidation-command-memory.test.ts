// The NodePool's memory of failed consolidation commands: a failed command is held for a backoff that
// doubles per consecutive failure (capped at 8×), another command is not held, expired entries are dropped,
// and an unreadable annotation blocks nothing.
import { describe, expect, it } from 'vitest';
import {
  backoffMs,
  heldCommandKeys,
  MAX_REMEMBERED_COMMANDS,
  parseCommandMemory,
  rememberFailedCommand,
  serializeCommandMemory,
} from '../../shared/decisions/consolidation/command-memory.js';

const base = 60_000;
const t0 = new Date('2026-12-01T12:00:00Z');
const at = (ms: number) => new Date(t0.getTime() + ms);

describe('consolidation command memory', () => {
  it('holds a failed command for the base backoff, doubling per consecutive failure up to 8×', () => {
    expect([1, 2, 3, 4, 5, 9].map((n) => backoffMs(n, base) / base)).toEqual([1, 2, 4, 8, 8, 8]);
    let memory = rememberFailedCommand(parseCommandMemory(undefined), { key: 'a', why: 'refused' }, t0, base);
    expect(memory.failures).toBe(1);
    expect(heldCommandKeys(memory, at(base - 1))).toEqual(new Set(['a']));
    expect(heldCommandKeys(memory, at(base))).toEqual(new Set());
    memory = rememberFailedCommand(memory, { key: 'a', why: 'refused again' }, at(base), base);
    expect(memory.commands).toEqual([{ key: 'a', until: at(3 * base).toISOString(), why: 'refused again' }]);
  });

  it('holds only the failed command, and drops expired entries when it records another', () => {
    const first = rememberFailedCommand({ failures: 0, commands: [] }, { key: 'a', why: 'x' }, t0, base);
    expect(heldCommandKeys(first, t0).has('b')).toBe(false);
    const second = rememberFailedCommand(first, { key: 'b', why: 'y' }, at(2 * base), base);
    expect(second.commands.map((c) => c.key)).toEqual(['b']);
    expect(second.failures).toBe(2);
  });

  it('survives a round trip through the annotation and keeps at most the newest entries', () => {
    let memory = parseCommandMemory(undefined);
    for (let i = 0; i < MAX_REMEMBERED_COMMANDS + 5; i++) {
      memory = rememberFailedCommand(memory, { key: `k${i}`, why: 'w' }, t0, base);
    }
    const parsed = parseCommandMemory(serializeCommandMemory(memory));
    expect(parsed).toEqual(memory);
    expect(parsed.commands).toHaveLength(MAX_REMEMBERED_COMMANDS);
    expect(parsed.commands.at(-1)?.key).toBe(`k${MAX_REMEMBERED_COMMANDS + 4}`);
  });

  it('reads an unreadable annotation as no memory', () => {
    for (const text of ['{', '[]', '{"failures":"x","commands":[{"key":1}]}']) {
      expect(parseCommandMemory(text)).toEqual({ failures: 0, commands: [] });
    }
  });
});
