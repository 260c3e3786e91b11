// The rollout settings as the Function App reads them (shared/config/settings.ts): their defaults, the
// values each accepts, and a refusal at startup that names the setting and what it should look like.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_ROLLOUT_SETTINGS, loadSettings } from '../../shared/config/settings.js';

const example = (
  JSON.parse(readFileSync(new URL('../../local.settings.example.json', import.meta.url), 'utf8')) as {
    Values: Record<string, string>;
  }
).Values;
const rollout = (env: Record<string, string>) => loadSettings({ ...example, ...env }).rollout;

describe('rollout settings', () => {
  it('default to a canary of 1, a 10 s poll, a 5-minute soak and the gates’ limits', () => {
    expect(rollout({})).toEqual(DEFAULT_ROLLOUT_SETTINGS);
    expect(DEFAULT_ROLLOUT_SETTINGS).toEqual({
      policy: 'Canary',
      canary: { count: 1 },
      pollSeconds: 10,
      soakSeconds: 300,
      initializedWithinSeconds: 600,
      podReadyWithinSeconds: 300,
      maxPodRestarts: 3,
    });
  });

  it('read every value', () => {
    expect(
      rollout({
        ROLLOUT_POLICY: 'Immediate',
        ROLLOUT_CANARY: '10%',
        ROLLOUT_POLL_SECONDS: '0.5',
        ROLLOUT_SOAK_SECONDS: '0',
        ROLLOUT_INITIALIZED_WITHIN_SECONDS: '120',
        ROLLOUT_POD_READY_WITHIN_SECONDS: '60',
        ROLLOUT_MAX_POD_RESTARTS: '5',
      }),
    ).toEqual({
      policy: 'Immediate',
      canary: { percent: 10 },
      pollSeconds: 0.5,
      soakSeconds: 0,
      initializedWithinSeconds: 120,
      podReadyWithinSeconds: 60,
      maxPodRestarts: 5,
    });
    expect(rollout({ ROLLOUT_CANARY: '3' }).canary).toEqual({ count: 3 });
  });

  it.each([
    ['ROLLOUT_POLICY', 'Slow', /ROLLOUT_POLICY is "Slow": expected one of "Canary", "Immediate"/],
    ['ROLLOUT_CANARY', '0', /ROLLOUT_CANARY is "0": expected a number of nodes \(1, 2, …\) or a percentage/],
    ['ROLLOUT_CANARY', '150%', /ROLLOUT_CANARY is "150%"/],
    ['ROLLOUT_CANARY', 'one', /ROLLOUT_CANARY is "one"/],
    ['ROLLOUT_POLL_SECONDS', '0', /ROLLOUT_POLL_SECONDS is "0": expected a number from 0.1 to 3600/],
    ['ROLLOUT_SOAK_SECONDS', '-1', /ROLLOUT_SOAK_SECONDS is "-1"/],
    ['ROLLOUT_INITIALIZED_WITHIN_SECONDS', 'soon', /ROLLOUT_INITIALIZED_WITHIN_SECONDS is "soon"/],
    ['ROLLOUT_POD_READY_WITHIN_SECONDS', '0', /ROLLOUT_POD_READY_WITHIN_SECONDS is "0"/],
    ['ROLLOUT_MAX_POD_RESTARTS', '2.5', /ROLLOUT_MAX_POD_RESTARTS is 2.5: expected a whole number/],
    ['ROLLOUT_MAX_POD_RESTARTS', '0', /ROLLOUT_MAX_POD_RESTARTS is "0"/],
  ])('%s=%s stops startup naming the setting', (name, value, message) => {
    expect(() => rollout({ [name]: value })).toThrow(message);
  });
});
