// How much Durable backend a cluster needs: the Durable Task actions a second a fleet of NodeClaims
// causes at a burst of launches and in steady state, and what that asks of each backend: the Durable
// Task Scheduler's Consumption SKU (a ceiling of actions a second), its Dedicated SKU (capacity units of
// a fixed rate each) and Azure Storage (control-queue partitions). Pure: the workload in, the sizing out;
// `npm run cost` prints the table docs/cost.md carries ("The Durable backend").
//
// An action is a message the scheduler dispatches to the app: an orchestration's start, an activity's
// scheduling and its result, a timer firing, an external event (Durable Task Scheduler billing,
// https://learn.microsoft.com/azure/azure-functions/durable/durable-task-scheduler/durable-task-scheduler-billing).
// The workload's unit is the NodeClaim: every action its launch monitor, replacement, termination and
// its share of the provisioning windows cause over its life. Until that is measured the count is an
// estimate, ESTIMATED_ACTIONS_PER_NODECLAIM, and every caller names which it used.

/** Seconds in a month as the scheduler's documentation counts them (730 h). */
export const SECONDS_PER_MONTH = 2_628_000;

/**
 * The current estimate of Durable Task actions over one NodeClaim's life, not a measurement: replace it
 * with the measured count when it lands. Kept apart so no output presents it as measured.
 */
export const ESTIMATED_ACTIONS_PER_NODECLAIM = 40;

/** A figure from Microsoft's documentation, with the page it is on. */
export interface SourcedFigure {
  value: number;
  source: string;
}

const BILLING =
  'https://learn.microsoft.com/azure/azure-functions/durable/durable-task-scheduler/durable-task-scheduler-billing';

/** The Durable Task Scheduler's published limits. Prices are not among them: see DURABLE_PRICES. */
export const DURABLE_TASK_SCHEDULER_LIMITS = {
  /** Consumption SKU: "Supports up to 500 actions per second." */
  consumptionMaxActionsPerSecond: { value: 500, source: `${BILLING}#consumption-sku` },
  /** Consumption SKU: "Retains data for a maximum of 30 days." */
  consumptionRetentionDays: { value: 30, source: `${BILLING}#consumption-sku` },
  /** Dedicated SKU: "Each CU supports up to 2,000 actions per second and 50 GB of orchestration data storage." */
  dedicatedActionsPerSecondPerCapacityUnit: { value: 2000, source: `${BILLING}#dedicated-sku` },
  /** Dedicated SKU: "Purchase up to three CUs." */
  dedicatedMaxCapacityUnits: { value: 3, source: `${BILLING}#dedicated-sku` },
  /** Dedicated SKU: "High availability with multi-CU deployments. A minimum of three CUs is required." */
  dedicatedHighAvailabilityCapacityUnits: { value: 3, source: `${BILLING}#dedicated-sku` },
} as const satisfies Record<string, SourcedFigure>;

/** Azure Storage's published limits on the partitions of a task hub. */
export const AZURE_STORAGE_LIMITS = {
  /** "A positive integer between 1 and 16. The default value is 4." */
  maxPartitions: {
    value: 16,
    source:
      'https://learn.microsoft.com/dotnet/api/microsoft.azure.webjobs.extensions.durabletask.azurestorageoptions.partitioncount',
  },
} as const satisfies Record<string, SourcedFigure>;

/**
 * Prices the documentation does not give: the Consumption SKU's price per action and the Dedicated SKU's
 * price per capacity unit-month are published only on the Azure Functions pricing page (regional, and not
 * in this repository's copy of the Retail Prices list), so no cost is computed from them here.
 */
export const DURABLE_PRICES = {
  consumptionPerAction: null,
  dedicatedPerCapacityUnitMonth: null,
  source: 'https://azure.microsoft.com/pricing/details/functions/',
} as const;

export interface DurableWorkload {
  /** NodeClaims in the fleet. */
  nodes: number;
  /** Durable Task actions over one NodeClaim's life (ESTIMATED_ACTIONS_PER_NODECLAIM until measured). */
  actionsPerNodeClaim: number;
  /** NodeClaims launched a minute at the burst (a scale-up, or a drift or expiry wave). */
  burstLaunchesPerMinute: number;
  /** How long a NodeClaim lives on average, in hours: the fleet is replaced once in this time at steady state. */
  meanNodeClaimLifetimeHours: number;
}

export interface BackendFit {
  /** The Consumption SKU carries the rate (at most its 500 actions a second). */
  consumptionFits: boolean;
  /** Dedicated capacity units the rate needs (at least one; may exceed the three that can be bought). */
  dedicatedCapacityUnits: number;
  /** Those units can be bought (at most three). */
  dedicatedFits: boolean;
}

export interface DurableSizing {
  workload: DurableWorkload;
  /** Actions a second while the burst lasts: each launch's lifetime actions counted at its launch. */
  burstActionsPerSecond: number;
  /** Actions a second at steady state: the fleet replaced once a lifetime. */
  steadyActionsPerSecond: number;
  /** Actions a month at steady state (what the Consumption SKU bills). */
  steadyActionsPerMonth: number;
  burst: BackendFit;
  steady: BackendFit;
}

function fit(actionsPerSecond: number): BackendFit {
  const perUnit = DURABLE_TASK_SCHEDULER_LIMITS.dedicatedActionsPerSecondPerCapacityUnit.value;
  const units = Math.max(1, Math.ceil(actionsPerSecond / perUnit));
  return {
    consumptionFits: actionsPerSecond <= DURABLE_TASK_SCHEDULER_LIMITS.consumptionMaxActionsPerSecond.value,
    dedicatedCapacityUnits: units,
    dedicatedFits: units <= DURABLE_TASK_SCHEDULER_LIMITS.dedicatedMaxCapacityUnits.value,
  };
}

function positive(name: string, value: number): void {
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`${name} must be a positive number, not ${value}`);
}

/**
 * The action rates of a workload and what each backend needs for them. The burst counts every action of
 * a NodeClaim's life at its launch, which overstates a burst's rate by the actions that come later
 * (termination): an upper bound, which is what sizing wants.
 */
export function durableBackendSizing(workload: DurableWorkload): DurableSizing {
  positive('nodes', workload.nodes);
  positive('actionsPerNodeClaim', workload.actionsPerNodeClaim);
  positive('burstLaunchesPerMinute', workload.burstLaunchesPerMinute);
  positive('meanNodeClaimLifetimeHours', workload.meanNodeClaimLifetimeHours);
  const burstActionsPerSecond = (workload.burstLaunchesPerMinute * workload.actionsPerNodeClaim) / 60;
  const launchesPerSecond = workload.nodes / (workload.meanNodeClaimLifetimeHours * 3600);
  const steadyActionsPerSecond = launchesPerSecond * workload.actionsPerNodeClaim;
  return {
    workload,
    burstActionsPerSecond,
    steadyActionsPerSecond,
    steadyActionsPerMonth: steadyActionsPerSecond * SECONDS_PER_MONTH,
    burst: fit(burstActionsPerSecond),
    steady: fit(steadyActionsPerSecond),
  };
}
