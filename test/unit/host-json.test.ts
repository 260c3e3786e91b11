// What the code assumes of the Durable Functions extension, set where Azure reads it (host.json): a
// workflow with a fixed instance ID (`repair-<uid>`, the executor's commands, the launch monitor) is
// started again only when it is not running, so two starts that race (a bridge event and a sweep) cannot
// restart a running workflow from its beginning. The extension's default, AnyState, would; the local host
// refuses such a start as NonRunningStates does (test/integration/host-orchestrations.test.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const hostJson = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'host.json'), 'utf8')) as {
  extensions?: { durableTask?: Record<string, unknown> };
};

describe('host.json', () => {
  it('lets a start replace an instance only when it is not running (NonRunningStates)', () => {
    expect(hostJson.extensions?.durableTask?.overridableExistingInstanceStates).toBe('NonRunningStates');
  });
});
