// Every reason the app writes Events with is in the one table of shared/decisions/event-reasons.ts (the
// lifecycle's event port accepts no other, which `npm run typecheck` holds), and that table is the one
// docs/events.md shows, with upstream's names where upstream has the Event: a reason marked upstream must
// be in upstream's list (docs/reference/karpenter-event-reasons.txt), an own one must not be, nor be a
// near-miss of one. The reasons are also scraped from the sources: every literal given to an event call
// is in the table, and every reason of the table is written somewhere outside it.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  EventReasonOrigins,
  eventReasons,
  type EventReason,
  type EventReasonOrigin,
} from '../../shared/decisions/event-reasons.js';

const root = join(import.meta.dirname, '..', '..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

const upstream = new Set(
  read('docs/reference/karpenter-event-reasons.txt')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#')),
);

/** docs/events.md's table: reason → origin. */
const documented = (() => {
  const doc = read('docs/events.md');
  const section = doc.slice(doc.indexOf('## Reasons'), doc.indexOf('## Differences from upstream'));
  const rows = new Map<string, string>();
  for (const match of section.matchAll(/^\| `([A-Za-z]+)` +\|[^|]+\|[^|]+\| *([a-z-]+) *\|/gm))
    rows.set(match[1]!, match[2]!);
  return rows;
})();

function sourceFiles(directory: string): string[] {
  return readdirSync(join(root, directory)).flatMap((entry) => {
    const path = join(directory, entry);
    if (statSync(join(root, path)).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

const sources = ['shared', 'functions', 'bridge'].flatMap(sourceFiles);

describe('Event reasons', () => {
  it('the code table and docs/events.md list the same reasons with the same origins', () => {
    expect(documented.size, 'rows found in docs/events.md').toBeGreaterThan(10);
    expect(Object.fromEntries(documented)).toEqual({ ...EventReasonOrigins });
  });

  it("a reason marked upstream is upstream's; an own reason is neither upstream's nor a near-miss of one", () => {
    const problems: string[] = [];
    for (const reason of eventReasons) {
      const origin: EventReasonOrigin = EventReasonOrigins[reason];
      if (origin === 'upstream' && !upstream.has(reason))
        problems.push(`${reason}: marked upstream, not upstream's`);
      if (origin !== 'upstream' && upstream.has(reason))
        problems.push(`${reason}: upstream's, marked ${origin}`);
      if (origin !== 'upstream') {
        for (const name of upstream) {
          if (name !== reason && (name.startsWith(reason) || reason.startsWith(name)))
            problems.push(`${reason}: near-miss of upstream's ${name}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('drain and termination use the reasons upstream emits for them', () => {
    const termination: EventReason[] = [
      'Evicted',
      'Disrupted',
      'FailedDraining',
      'TerminationGracePeriodExpiring',
    ];
    for (const reason of termination) expect(EventReasonOrigins[reason]).toBe('upstream');
    expect(eventReasons).toContain('InsufficientCapacityError');
    expect(eventReasons).not.toContain('InsufficientCapacity');
  });

  it('every literal reason given to an event call in the sources is in the table', () => {
    const known = new Set<string>(eventReasons);
    const unknown: string[] = [];
    let calls = 0;
    for (const path of sources) {
      const text = read(path);
      for (const match of text.matchAll(/\.(?:warning|normal)\(\s*[^,]+,\s*(['"`])([^'"`]*)\1/g)) {
        calls += 1;
        if (!known.has(match[2]!)) unknown.push(`${path}: ${match[2]}`);
      }
    }
    expect(calls, 'literal reasons found in event calls').toBeGreaterThan(0);
    expect(unknown).toEqual([]);
  });

  it('every reason of the table is written somewhere in the sources (no reason the app never emits)', () => {
    const text = sources
      .filter((path) => !path.endsWith('decisions/event-reasons.ts'))
      .map(read)
      .join('\n');
    const unused = eventReasons.filter((reason) => !new RegExp(`['"\`]${reason}['"\`]`).test(text));
    expect(unused).toEqual([]);
  });

  it('the type admits only the table', () => {
    // @ts-expect-error: not a reason the app emits (upstream's name is InsufficientCapacityError)
    const stale: EventReason = 'InsufficientCapacity';
    expect(eventReasons).not.toContain(stale);
  });
});
