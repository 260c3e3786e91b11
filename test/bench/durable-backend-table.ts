// The Durable backend's sizing table `npm run cost` prints (and docs/cost.md carries, "The Durable
// backend"): actions a second at a burst and in steady state for 100, 1,000 and 5,000 nodes, from the
// pure math in shared/decisions/durable-backend-sizing.ts, and the SKU each rate fits. Every input is
// printed with it; the actions per NodeClaim is the current estimate until the measurement lands
// (COST_ACTIONS_PER_NODECLAIM=<measured> npm run cost prints the table for the measured count).
// Runs alone too: npx tsx test/bench/durable-backend-table.ts
import { pathToFileURL } from 'node:url';
import {
  AZURE_STORAGE_LIMITS,
  DURABLE_PRICES,
  DURABLE_TASK_SCHEDULER_LIMITS,
  durableBackendSizing,
  ESTIMATED_ACTIONS_PER_NODECLAIM,
  type BackendFit,
  type DurableSizing,
} from '../../shared/decisions/durable-backend-sizing.js';

/** The scenarios' inputs besides the fleet: the whole fleet launched within 10 minutes, replaced weekly. */
export const BURST_MINUTES = 10;
export const MEAN_LIFETIME_HOURS = 168;

export function durableScenarios(actionsPerNodeClaim = ESTIMATED_ACTIONS_PER_NODECLAIM): DurableSizing[] {
  return [100, 1000, 5000].map((nodes) =>
    durableBackendSizing({
      nodes,
      actionsPerNodeClaim,
      burstLaunchesPerMinute: nodes / BURST_MINUTES,
      meanNodeClaimLifetimeHours: MEAN_LIFETIME_HOURS,
    }),
  );
}

const rate = (value: number): string => (value >= 10 ? value.toFixed(0) : value.toPrecision(2));
const fits = (fit: BackendFit): string =>
  `Consumption ${fit.consumptionFits ? 'yes' : 'no'}; Dedicated ${fit.dedicatedCapacityUnits} CU${fit.dedicatedFits ? '' : ' (over the 3 CU maximum)'}`;

/** The table as Markdown, with its inputs and the limits it is judged against. */
export function durableBackendTable(actionsPerNodeClaim = ESTIMATED_ACTIONS_PER_NODECLAIM): string {
  const estimate = actionsPerNodeClaim === ESTIMATED_ACTIONS_PER_NODECLAIM;
  const rows = durableScenarios(actionsPerNodeClaim).map((s) =>
    [
      s.workload.nodes.toLocaleString('en-US'),
      `${s.workload.burstLaunchesPerMinute.toLocaleString('en-US')}`,
      rate(s.burstActionsPerSecond),
      fits(s.burst),
      rate(s.steadyActionsPerSecond),
      Math.round(s.steadyActionsPerMonth).toLocaleString('en-US'),
      fits(s.steady),
    ].join(' | '),
  );
  const limits = DURABLE_TASK_SCHEDULER_LIMITS;
  return [
    `inputs: ${actionsPerNodeClaim} actions per NodeClaim (${estimate ? 'the current ESTIMATE, not a measurement' : 'measured'}); ` +
      `burst: the whole fleet launched within ${BURST_MINUTES} min; steady: each NodeClaim lives ${MEAN_LIFETIME_HOURS} h on average`,
    `limits: Consumption up to ${limits.consumptionMaxActionsPerSecond.value} actions/s; Dedicated ` +
      `${limits.dedicatedActionsPerSecondPerCapacityUnit.value} actions/s per CU, at most ${limits.dedicatedMaxCapacityUnits.value} CUs ` +
      `(${limits.consumptionMaxActionsPerSecond.source}); Azure Storage at most ${AZURE_STORAGE_LIMITS.maxPartitions.value} partitions, no published action rate`,
    `prices: not in the documentation (${DURABLE_PRICES.source}), so no cost is computed`,
    '',
    '| nodes | burst launches/min | burst actions/s | burst fits | steady actions/s | steady actions/month | steady fits |',
    '| ----: | -----------------: | --------------: | ---------- | ---------------: | -------------------: | ----------- |',
    ...rows.map((row) => `| ${row} |`),
  ].join('\n');
}

/** COST_ACTIONS_PER_NODECLAIM: the measured count, once there is one; the estimate otherwise. */
export function printDurableBackendSizing(env: NodeJS.ProcessEnv = process.env): void {
  const measured = Number(env['COST_ACTIONS_PER_NODECLAIM']);
  console.log('\n Durable backend sizing (docs/cost.md, "The Durable backend"):\n');
  console.log(durableBackendTable(measured > 0 ? measured : ESTIMATED_ACTIONS_PER_NODECLAIM));
  console.log('');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) printDurableBackendSizing();
