// The Durable backend's sizing table `npm run cost` prints (and docs/cost.md carries, "The Durable
// backend"): actions a second for 100, 1,000 and 5,000 nodes launched within one minute and within 10
// minutes, and in steady state, from the pure math in shared/decisions/durable-backend-sizing.ts, and the
// SKU each rate needs. The actions per NodeClaim are the bench's measurements (VM creation 30 s, the
// default, and 90 s), each printed with where it comes from and the command line that measures it again;
// COST_ACTIONS_PER_NODECLAIM=<n> npm run cost adds rows for another count, labelled as not measured.
// Runs alone too: npx tsx test/bench/durable-backend-table.ts
import { pathToFileURL } from 'node:url';
import { DURABLE_GOALS } from '../../local/scenarios/day/durable-figures.js';
import {
  actionsPerNodeClaimFor,
  AZURE_STORAGE_LIMITS,
  DURABLE_PRICES,
  DURABLE_TASK_SCHEDULER_LIMITS,
  durableBackendSizing,
  launchesPerMinuteAt,
  MEASURED_ACTIONS_PER_NODECLAIM,
  type BackendFit,
  type DurableSizing,
} from '../../shared/decisions/durable-backend-sizing.js';

/** The scenarios' inputs besides the fleet: the fleet launched within 1 and within 10 minutes, replaced weekly. */
export const BURST_MINUTES = [1, 10] as const;
export const FLEETS = [100, 1000, 5000] as const;
export const MEAN_LIFETIME_HOURS = 168;
/** The goal's burst: 1,000 NodeClaims launched within one minute. */
const GOAL_BURST = { launches: 1000, withinMinutes: 1 } as const;

/** One count of actions per NodeClaim the table is printed for, and what it is. */
export interface TableInput {
  actionsPerNodeClaim: number;
  label: string;
}

export const MEASURED_INPUTS: readonly TableInput[] = Object.values(MEASURED_ACTIONS_PER_NODECLAIM).map(
  (m) => ({
    actionsPerNodeClaim: m.value,
    label:
      `measured, VM creation ${m.vmCreationSeconds} s (${Object.entries(m.byOrchestration)
        .map(([name, actions]) => `${name} ${actions}`)
        .join(', ')}): ${m.source}; ` + `re-measure: ${m.remeasure}`,
  }),
);

export function durableScenarios(actionsPerNodeClaim: number): DurableSizing[] {
  return FLEETS.map((nodes) =>
    durableBackendSizing({
      nodes,
      actionsPerNodeClaim,
      bursts: BURST_MINUTES.map((withinMinutes) => ({ launches: nodes, withinMinutes })),
      meanNodeClaimLifetimeHours: MEAN_LIFETIME_HOURS,
    }),
  );
}

const count = (value: number): string => Math.round(value).toLocaleString('en-US');
const rate = (value: number): string => (value >= 10 ? count(value) : value.toPrecision(2));
const fits = (fit: BackendFit): string =>
  `Consumption ${fit.consumptionFits ? 'yes' : 'no'}; Dedicated ${fit.dedicatedCapacityUnits} CU${fit.dedicatedCapacityUnits === 1 ? '' : 's'}${fit.dedicatedFits ? '' : ' (over the 3 CU maximum)'}`;

/** The table as Markdown, with its inputs, the limits it is judged against and the goals. */
export function durableBackendTable(inputs: readonly TableInput[] = MEASURED_INPUTS): string {
  const rows = inputs.flatMap((input) =>
    durableScenarios(input.actionsPerNodeClaim).map((s) =>
      [
        String(input.actionsPerNodeClaim),
        s.workload.nodes.toLocaleString('en-US'),
        ...s.bursts.flatMap((b) => [rate(b.actionsPerSecond), fits(b.fit)]),
        rate(s.steadyActionsPerSecond),
        count(s.steadyActionsPerMonth),
        fits(s.steady),
      ].join(' | '),
    ),
  );
  const limits = DURABLE_TASK_SCHEDULER_LIMITS;
  const ceilings = (actions: number): string =>
    `A = ${actions}, Consumption ${count(launchesPerMinuteAt(limits.consumptionMaxActionsPerSecond.value, actions))}, ` +
    `1 CU ${count(launchesPerMinuteAt(limits.dedicatedActionsPerSecondPerCapacityUnit.value, actions))}, ` +
    `${limits.dedicatedMaxCapacityUnits.value} CUs ${count(
      launchesPerMinuteAt(
        limits.dedicatedActionsPerSecondPerCapacityUnit.value * limits.dedicatedMaxCapacityUnits.value,
        actions,
      ),
    )}`;
  const goalBudget = actionsPerNodeClaimFor(DURABLE_GOALS.burstActionsPerSecond, GOAL_BURST);
  const goalRate = (actions: number): number =>
    durableBackendSizing({
      nodes: GOAL_BURST.launches,
      actionsPerNodeClaim: actions,
      bursts: [GOAL_BURST],
      meanNodeClaimLifetimeHours: MEAN_LIFETIME_HOURS,
    }).bursts[0]?.actionsPerSecond ?? Number.NaN;
  const met = (actions: number): string =>
    actions <= DURABLE_GOALS.actionsPerNodeClaim && goalRate(actions) <= DURABLE_GOALS.burstActionsPerSecond
      ? 'met'
      : 'NOT met';
  return [
    'inputs, actions per NodeClaim lifetime (A):',
    ...inputs.map((input) => `- A = ${input.actionsPerNodeClaim}: ${input.label}`),
    `bursts: the fleet launched within ${BURST_MINUTES.map((m) => `${m} min`).join(' and within ')}, every action of a NodeClaim's life counted at its launch (an upper bound); ` +
      `steady: each NodeClaim lives ${MEAN_LIFETIME_HOURS} h on average`,
    `limits: Consumption up to ${limits.consumptionMaxActionsPerSecond.value} actions/s; Dedicated ` +
      `${limits.dedicatedActionsPerSecondPerCapacityUnit.value} actions/s per CU, at most ${limits.dedicatedMaxCapacityUnits.value} CUs ` +
      `(${limits.consumptionMaxActionsPerSecond.source}); Azure Storage at most ${AZURE_STORAGE_LIMITS.maxPartitions.value} partitions, no published action rate`,
    `prices: not in the documentation (${DURABLE_PRICES.source}), so no cost is computed`,
    '',
    '| A | nodes | within 1 min: actions/s | within 1 min: fits | within 10 min: actions/s | within 10 min: fits | steady actions/s | steady actions/month | steady fits |',
    '| -: | ----: | ----------------------: | ------------------ | -----------------------: | ------------------- | ---------------: | -------------------: | ----------- |',
    ...rows.map((row) => `| ${row} |`),
    '',
    `the most launches a minute each backend carries: at ${inputs.map((input) => ceilings(input.actionsPerNodeClaim)).join('; at ')}`,
    `goals: ≤ ${DURABLE_GOALS.actionsPerNodeClaim} actions per NodeClaim and ≤ ${DURABLE_GOALS.burstActionsPerSecond} actions/s for ` +
      `${GOAL_BURST.launches.toLocaleString('en-US')} launched within ${GOAL_BURST.withinMinutes} min (a budget of A ≤ ${count(goalBudget)} per NodeClaim): ` +
      inputs
        .map(
          (input) =>
            `A = ${input.actionsPerNodeClaim}, ${count(goalRate(input.actionsPerNodeClaim))} actions/s, ${met(input.actionsPerNodeClaim)}`,
        )
        .join('; '),
  ].join('\n');
}

/** COST_ACTIONS_PER_NODECLAIM: another count to print beside the measured ones, labelled as not measured. */
export function printDurableBackendSizing(env: NodeJS.ProcessEnv = process.env): void {
  const given = Number(env['COST_ACTIONS_PER_NODECLAIM']);
  const inputs =
    given > 0
      ? [
          ...MEASURED_INPUTS,
          { actionsPerNodeClaim: given, label: 'given by COST_ACTIONS_PER_NODECLAIM, not a measurement' },
        ]
      : MEASURED_INPUTS;
  console.log('\n Durable backend sizing (docs/cost.md, "The Durable backend"):\n');
  console.log(durableBackendTable(inputs));
  console.log('');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) printDurableBackendSizing();
