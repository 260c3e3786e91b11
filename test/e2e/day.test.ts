// The day end to end, compressed for CI: one stack of its own (its own control plane, because the day
// stops kube-apiserver, which would break every other test file on the shared one), a simulated 24 h of
// workload and weather, and every invariant of the day checked on every recorded version. Nothing is
// mocked. DAY_SEED replays another seed; the default is fixed so a failure replays as it is.
import { expect, test } from 'vitest';
import { createActivityRelay, playScenario } from '../../local/scenarios/index.js';
import { dayScenario } from '../../local/scenarios/day/day-scenario.js';
import { startLocalStack, type LocalStack } from '../../local/stack/local-stack.js';
import { createLogger } from '../../shared/observability/logger.js';
import { devCa } from '../support/dev-ca.js';
import { expectInvariantsHold } from './e2e-stack.js';

/** The soak's compression: 24 simulated hours in this many wall minutes, at this stack speed. */
export const DAY_SOAK = { dayMinutes: 3.5, speed: 4 } as const;
const seed = Number(process.env.DAY_SEED ?? '26');

test(`a compressed day (seed ${seed}) keeps every invariant`, { timeout: 12 * 60_000 }, async () => {
  const warnings: string[] = [];
  const log = createLogger({
    component: 'day-e2e',
    sink: (level, line) => {
      if (process.env.TEST_LOGS) process.stderr.write(line + '\n');
      if (level === 'warn' || level === 'error') {
        warnings.push(line);
        if (warnings.length > 100) warnings.shift();
      }
    },
  });
  let stack: LocalStack | undefined;
  try {
    stack = await startLocalStack({ speed: DAY_SOAK.speed, functionHost: false, ca: await devCa(), log });
    const report = await playScenario(dayScenario({ seed, dayMinutes: DAY_SOAK.dayMinutes }), stack, {
      relay: createActivityRelay(),
      print: (line) => console.log(line),
    });
    console.log(report.summaryText);
    if (!report.passed) console.log(warnings.slice(-40).join('\n'));
    expectInvariantsHold(report);
    expect(report.outcome.figures.nodeClaims).toBeGreaterThan(0);
  } finally {
    await stack?.stop();
  }
});
