// drift-budget end to end, as `npm start` plays it: a static NodePool of 10 with budget "5" drifts on an
// imageFamily change; replacements run through the app's own timer-driven sweep (scoped to this file's
// objects) and replacement orchestrations. Never more than 5 disrupting; 5 at once in the first wave.
import { expect, test } from 'vitest';
import { driftBudget } from '../../local/scenarios/drift-budget.js';
import { expectInvariantsHold, playEndToEnd } from './e2e-stack.js';

test('10 drifted nodes with budget "5": 5 in flight at once, never 6', { timeout: 240_000 }, async () => {
  const report = await playEndToEnd(driftBudget);
  expectInvariantsHold(report);
  expect(report.outcome.figures.maxInFlight).toBe(5);
});
