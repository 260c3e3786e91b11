// Karpenter's batch window settings, written as Karpenter writes them (Go durations).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../shared/config/settings.js';

const example = (
  JSON.parse(readFileSync(new URL('../../local.settings.example.json', import.meta.url), 'utf8')) as {
    Values: Record<string, string>;
  }
).Values;
const withoutBatch = Object.fromEntries(
  Object.entries(example).filter(([name]) => !name.startsWith('BATCH_')),
);

describe('provisioning settings', () => {
  it("default to Karpenter's BATCH_IDLE_DURATION 1s and BATCH_MAX_DURATION 10s", () => {
    expect(loadSettings(withoutBatch).provisioning).toEqual({ batchIdleMs: 1_000, batchMaxMs: 10_000 });
  });

  it('read Go durations and the scope selector', () => {
    const settings = loadSettings({
      ...withoutBatch,
      BATCH_IDLE_DURATION: '500ms',
      BATCH_MAX_DURATION: '1m',
      PROVISIONING_SELECTOR: 'team=blue',
    });
    expect(settings.provisioning).toEqual({ batchIdleMs: 500, batchMaxMs: 60_000, selector: 'team=blue' });
  });

  it.each([
    [{ BATCH_IDLE_DURATION: 'soon' }, /BATCH_IDLE_DURATION must be a duration/],
    [{ BATCH_MAX_DURATION: '0s' }, /BATCH_MAX_DURATION must be a positive duration/],
    [{ BATCH_IDLE_DURATION: '20s' }, /BATCH_MAX_DURATION must be at least BATCH_IDLE_DURATION/],
  ])('reject %j naming the setting', (values, message) => {
    expect(() => loadSettings({ ...withoutBatch, ...values })).toThrow(message);
  });
});
