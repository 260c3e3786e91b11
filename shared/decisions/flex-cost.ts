// What the Function App costs a month on Flex Consumption, from the plan's billing rules, beside what a
// self-hosted Karpenter's controller costs as its share of a node. Pure: prices and a workload in,
// line items out; the cost command reads the prices through the Retail Prices client.
//
// Flex Consumption bills (Azure Functions pricing, Flex Consumption plan):
// - always-ready instances: a baseline per GiB-second of instance memory for every second they are
//   provisioned, busy or not, plus a lower execution-time rate per GiB-second while they execute;
// - on-demand instances: execution time per GiB-second;
// - every execution, on either, per execution (priced per 10);
// - each execution's time counts at least 1 s (the minimum billable duration), which is why a short,
//   frequent timer costs about a second of memory per run however quickly it returns;
// - a monthly free grant on on-demand only (100,000 GiB-s and 250,000 executions per subscription).
// Executions that overlap on one instance are billed once for the overlap; this estimate charges each
// on its own (an upper bound for bursts, exact for the sequential timers that dominate at idle). Where
// long executions could overlap, the caller says so in the seconds it passes: the Durable group's waits
// (test/bench/durable-executions.ts) share an instance's seconds when the launch rate makes them overlap.

export interface FlexPrices {
  onDemandPerGibSecond: number;
  onDemandPerExecution: number;
  alwaysReadyBaselinePerGibSecond: number;
  alwaysReadyPerGibSecond: number;
  alwaysReadyPerExecution: number;
}

/** The Retail Prices meter names of Flex Consumption, and which price each one is. */
export const FLEX_METERS: Record<string, keyof FlexPrices> = {
  'On Demand Execution Time': 'onDemandPerGibSecond',
  'On Demand Total Executions': 'onDemandPerExecution',
  'Always Ready Baseline': 'alwaysReadyBaselinePerGibSecond',
  'Always Ready Execution Time': 'alwaysReadyPerGibSecond',
  'Always Ready Total Executions': 'alwaysReadyPerExecution',
};

export interface PriceItem {
  productName?: string;
  meterName?: string;
  unitOfMeasure?: string;
  retailPrice?: number;
}

/** Flex prices from Retail Prices items; the meters missing, if any, instead. */
export function flexPricesFrom(items: readonly PriceItem[]): FlexPrices | { missing: string[] } {
  const prices: Partial<FlexPrices> = {};
  for (const item of items) {
    if (item.productName !== 'Functions Flex Consumption' || item.retailPrice === undefined) continue;
    const price = FLEX_METERS[item.meterName ?? ''];
    if (!price) continue;
    // Executions are priced per 10 (unitOfMeasure "10"); execution time per "1 GiB Second".
    const unit = item.unitOfMeasure ?? '';
    prices[price] = item.retailPrice / (/^\d+$/.test(unit) ? Number(unit) : 1);
  }
  const missing = Object.entries(FLEX_METERS)
    .filter(([, price]) => prices[price] === undefined)
    .map(([name]) => name);
  return missing.length > 0 ? { missing } : (prices as FlexPrices);
}

export const SECONDS_PER_MONTH = 730 * 3600;
export const FREE_GRANT = { gibSeconds: 100_000, executions: 250_000 };
export const MINIMUM_BILLED_SECONDS = 1;

export interface ExecutionClass {
  name: string;
  perMonth: number;
  /** How long one execution runs (billed as at least 1 s). */
  seconds: number;
  /** On the always-ready instances of its group, or on on-demand ones. */
  alwaysReady: boolean;
}

export interface FlexWorkload {
  instanceMemoryGib: number;
  alwaysReadyInstances: number;
  executions: readonly ExecutionClass[];
}

export interface CostLine {
  item: string;
  quantity: string;
  usd: number;
}

export interface FlexCost {
  lines: CostLine[];
  totalUsd: number;
}

export function flexMonthlyCost(workload: FlexWorkload, prices: FlexPrices): FlexCost {
  const lines: CostLine[] = [];
  const baselineGibSeconds = workload.alwaysReadyInstances * workload.instanceMemoryGib * SECONDS_PER_MONTH;
  lines.push({
    item: `always-ready baseline (${workload.alwaysReadyInstances} × ${workload.instanceMemoryGib} GiB)`,
    quantity: `${round(baselineGibSeconds)} GiB-s`,
    usd: baselineGibSeconds * prices.alwaysReadyBaselinePerGibSecond,
  });
  let onDemandGibSeconds = 0;
  let onDemandExecutions = 0;
  for (const execution of workload.executions) {
    const gibSeconds =
      execution.perMonth * Math.max(MINIMUM_BILLED_SECONDS, execution.seconds) * workload.instanceMemoryGib;
    if (execution.alwaysReady) {
      lines.push({
        item: `${execution.name} (always ready)`,
        quantity: `${round(execution.perMonth)} runs, ${round(gibSeconds)} GiB-s`,
        usd:
          gibSeconds * prices.alwaysReadyPerGibSecond + execution.perMonth * prices.alwaysReadyPerExecution,
      });
    } else {
      onDemandGibSeconds += gibSeconds;
      onDemandExecutions += execution.perMonth;
      lines.push({
        item: `${execution.name} (on demand)`,
        quantity: `${round(execution.perMonth)} runs, ${round(gibSeconds)} GiB-s`,
        usd: gibSeconds * prices.onDemandPerGibSecond + execution.perMonth * prices.onDemandPerExecution,
      });
    }
  }
  const grantedGibSeconds = Math.min(onDemandGibSeconds, FREE_GRANT.gibSeconds);
  const grantedExecutions = Math.min(onDemandExecutions, FREE_GRANT.executions);
  lines.push({
    item: 'on-demand free grant',
    quantity: `−${round(grantedGibSeconds)} GiB-s, −${round(grantedExecutions)} runs`,
    usd: -(grantedGibSeconds * prices.onDemandPerGibSecond + grantedExecutions * prices.onDemandPerExecution),
  });
  return { lines, totalUsd: lines.reduce((sum, line) => sum + line.usd, 0) };
}

export interface SelfHostedKarpenter {
  replicas: number;
  vcpuPerReplica: number;
  gibPerReplica: number;
  /** The node the replicas run on: its hourly price and size. */
  node: { name: string; usdPerHour: number; vcpus: number; gib: number };
}

/**
 * Karpenter's controller as its share of the node it runs on: the larger of its CPU and memory fraction
 * of the node (what it keeps others from using), times the node's price.
 */
export function selfHostedMonthlyCost(karpenter: SelfHostedKarpenter): FlexCost {
  const { node } = karpenter;
  const share = Math.max(
    (karpenter.replicas * karpenter.vcpuPerReplica) / node.vcpus,
    (karpenter.replicas * karpenter.gibPerReplica) / node.gib,
  );
  const usd = share * node.usdPerHour * (SECONDS_PER_MONTH / 3600);
  return {
    lines: [
      {
        item: `${karpenter.replicas} replicas × ${karpenter.vcpuPerReplica} vCPU / ${karpenter.gibPerReplica} GiB on ${node.name}`,
        quantity: `${round(share * 100)}% of the node`,
        usd,
      },
    ],
    totalUsd: usd,
  };
}

function round(value: number): string {
  return value >= 100 ? Math.round(value).toLocaleString('en-US') : String(Math.round(value * 100) / 100);
}
