// The reference scenarios `npm start` plays by default, in order.
import { consolidation } from './consolidation.js';
import { driftBudget } from './drift-budget.js';
import { headroom } from './headroom.js';
import { launchFailure } from './launch-failure.js';
import { registrationRace } from './registration-race.js';
import { scaleUp } from './scale-up.js';
import type { Scenario } from './scenario.js';

export const scenarios: readonly Scenario[] = [
  registrationRace,
  launchFailure,
  driftBudget,
  scaleUp,
  consolidation,
  headroom,
];

/** Scenarios of the issue that cannot be played yet, with the reason (for --help and the summary). */
export const unavailableScenarios: readonly { name: string; reason: string }[] = [];

export { playScenario, createActivityRelay, type ScenarioReport } from './runner.js';
export type { Scenario } from './scenario.js';
