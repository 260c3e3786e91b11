// The scale scenario end to end at a small size: 0 → N nodes from pending pods, a drift of every node at
// a 10% budget, a scale-down consolidation must follow, and the teardown, judged by the day's invariants.
// On a control plane of its own: the scenario reads the API server's request counters, which the other
// test files' traffic on the shared one would fill. Nothing is mocked.
import { expect, test } from 'vitest';
import { createActivityRelay, playScenario } from '../../local/scenarios/index.js';
import { scaleScenario } from '../../local/scenarios/scale/scale-scenario.js';
import { startLocalStack, type LocalStack } from '../../local/stack/local-stack.js';
import { createLogger } from '../../shared/observability/logger.js';
import { devCa } from '../support/dev-ca.js';
import { expectInvariantsHold } from './e2e-stack.js';

/** Small enough to play in a few minutes beside the other files, large enough for ten drift waves. */
const SCALE_SOAK = { nodes: 30, speed: 8 } as const;

test(
  `${SCALE_SOAK.nodes} nodes up, drifted, consolidated down and torn down keep every invariant`,
  { timeout: 10 * 60_000 },
  async () => {
    const warnings: string[] = [];
    const log = createLogger({
      component: 'scale-e2e',
      sink: (level, line) => {
        if (process.env.TEST_LOGS) process.stderr.write(line + '\n');
        if (level === 'warn' || level === 'error') {
          warnings.push(line);
          if (warnings.length > 100) warnings.shift();
        }
      },
    });
    const relay = createActivityRelay();
    let stack: LocalStack | undefined;
    try {
      stack = await startLocalStack({
        speed: SCALE_SOAK.speed,
        ca: await devCa(),
        log,
        onActivity: relay.listener,
        clusterScale: true,
      });
      const report = await playScenario(scaleScenario({ nodes: SCALE_SOAK.nodes }), stack, {
        relay,
        print: (line) => console.log(line),
      });
      console.log(report.summaryText);
      if (!report.passed) console.log(warnings.slice(-40).join('\n'));
      expectInvariantsHold(report);
      expect(report.outcome.figures.peakNodes).toBeGreaterThanOrEqual(SCALE_SOAK.nodes * 0.8);
    } finally {
      await stack?.stop();
    }
  },
);
