// The reference scenarios `npm start` plays by default, in order.
import { consolidation } from './consolidation.js';
import { driftBudget } from './drift-budget.js';
import { headroom } from './headroom.js';
import { launchFailure } from './launch-failure.js';
import { nodeRepair } from './node-repair.js';
import { registrationRace } from './registration-race.js';
import { rollout } from './rollout.js';
import { scaleUp } from './scale-up.js';
import type { Scenario } from './scenario.js';
import { DEFAULT_DAY_MINUTES, dayScenario, type DayOptions } from './day/day-scenario.js';
import { DEFAULT_SCALE_NODES, scaleScenario, type ScaleOptions } from './scale/scale-scenario.js';

export const scenarios: readonly Scenario[] = [
  registrationRace,
  launchFailure,
  driftBudget,
  rollout,
  scaleUp,
  consolidation,
  headroom,
  nodeRepair,
];

/**
 * Scenarios that play only when named (--scenario): too long for the default run. The day takes
 * DEFAULT_DAY_MINUTES of wall time and runs the Function App in its own process; scale grows the
 * cluster to --nodes and back, minutes at the default size.
 */
export const namedOnlyScenarios = (day: DayOptions = {}, scale: ScaleOptions = {}): readonly Scenario[] => [
  dayScenario(day),
  scaleScenario(scale),
];

export { DEFAULT_DAY_MINUTES, DEFAULT_SCALE_NODES, type DayOptions, type ScaleOptions };

/** Scenarios of the issue that cannot be played yet, with the reason (for --help and the summary). */
export const unavailableScenarios: readonly { name: string; reason: string }[] = [];

export { playScenario, createActivityRelay, type ScenarioReport } from './runner.js';
export type { Scenario } from './scenario.js';
