// `npm run cost` (also the last part of `npm run bench`): the app's whole monthly bill at idle and at
// 1,000 nodes: Flex Consumption, from the plan's billing rules (shared/decisions/flex-cost.ts) and prices
// read through the project's Retail Prices client; telemetry ingestion, from what the telemetry bench
// measures through the real exporter; and the Azure Storage transactions of Durable's backend and the
// queue trigger, with their polling read from host.json (telemetry-cost.ts). Beside it a self-hosted
// Karpenter's controller as its share of a node, and AKS node auto-provisioning, whose controller the
// user does not pay for. Prices come from the ARM emulator's Retail Prices API (a copy of the public
// list prices) unless RETAIL_PRICES_ENDPOINT names the real one (https://prices.azure.com). Every input
// of the workload is printed with the table; they are estimates of this app's behaviour, named below,
// except the Durable group's executions per launch, which follow the bench's measured actions
// (durable-executions.ts; COST_VM_CREATION_SECONDS=30 bills the 30 s creation's instead of 90 s's).
// First, the Durable backend's sizing from the action rate (durable-backend-table.ts).
import { pathToFileURL } from 'node:url';
import { startArmEmulator } from '../../local/arm-emulator/index.js';
import { fetchRetailPriceItems, fetchRetailPrices, httpGetJson } from '../../shared/azure/retail-prices.js';
import { DEFAULT_GC_SCHEDULE, DEFAULT_SWEEP_SCHEDULE } from '../../shared/config/settings.js';
import {
  flexMonthlyCost,
  flexPricesFrom,
  selfHostedMonthlyCost,
  SECONDS_PER_MONTH,
  type ExecutionClass,
  type FlexCost,
  type FlexPrices,
} from '../../shared/decisions/flex-cost.js';
import type { MeasuredActionsPerNodeClaim } from '../../shared/decisions/durable-backend-sizing.js';
import { refreshedPriceBook } from '../../shared/decisions/prices/price-book.js';
import { printDurableBackendSizing } from './durable-backend-table.js';
import {
  activitySlotsPerInstance,
  durableLine,
  measuredCase,
  nodeClaimExecutions,
  type DurableLine,
} from './durable-executions.js';
import { measureTelemetry } from './telemetry-bench.js';
import {
  hostPolling,
  prometheusIngestion,
  storageTransactions,
  telemetryIngestion,
  totalUsd,
  type CostLine,
  type Workload,
} from './telemetry-cost.js';

const REGION = process.env['COST_REGION'] ?? 'eastus';
const INSTANCE_MEMORY_GIB = 2; // instanceMemoryMB 2048, the Bicep and Terraform default
const SYSTEM_NODE = 'Standard_D4as_v5'; // a typical AKS system node, where Karpenter's controller runs

/** Seconds between runs of an NCRONTAB "*\/N * * * * *" (seconds) or "0 *\/N * * * *" (minutes). */
function periodSeconds(schedule: string): number {
  const [seconds = '', minutes = ''] = schedule.split(' ');
  const every = (field: string) => Number(/^\*\/(\d+)$/.exec(field)?.[1] ?? NaN);
  if (seconds.startsWith('*/')) return every(seconds);
  if (minutes.startsWith('*/')) return every(minutes) * 60;
  throw new Error(`cannot read a period from ${schedule}`);
}

interface Scenario {
  name: string;
  /** Nodes and NodePools of the cluster whose telemetry is measured. */
  nodes: number;
  nodePools: number;
  executions: ExecutionClass[];
  queueMessages: number;
  durableExecutions: number;
}

/** 1,000 nodes, each replaced once a week. */
const LAUNCHES_PER_MONTH_AT_SCALE = (1000 * 730) / 168;

/** The Durable group's line at 1,000 nodes: the launches' executions and 2,000 provisioning windows. */
function durableAtScale(durableCase: MeasuredActionsPerNodeClaim): DurableLine {
  return durableLine({
    launchesPerMonth: LAUNCHES_PER_MONTH_AT_SCALE,
    windowsPerMonth: 2000,
    shape: nodeClaimExecutions(durableCase),
  });
}

/**
 * The app's executions a month. Timers run on demand (Flex gives each timer function its own scale
 * group; none is always ready). At 1,000 nodes every node is replaced once a week (drift, expiry or
 * consolidation: 1,000 × 730/168 launches a month, spread evenly), each launch costing about 12 queue
 * messages (the NodeClaim's and the Node's changes the bridge forwards: created, launched, registered,
 * initialized, deleted) and the Durable group's executions of its launch monitor and termination as the
 * second versions make them (durable-executions.ts: the measured actions of `durableCase`, 10 at 90 s VM
 * creation, four of them activity calls that sleep through the creation and the VM's deletion, billed as
 * the execution time they are, each alone since at this rate no two overlap), and 2,000 provisioning
 * windows a month take 5 durable executions each. A replacement's disruption executor is not in the measured count
 * (the bench's static NodePool has none). A settled cluster sends nothing else: the bridge forwards only
 * changes a handler acts on (bridge/relevance.ts), so Node heartbeats cost nothing.
 */
function scenarios(sweepSeconds: number, durableCase: MeasuredActionsPerNodeClaim): Scenario[] {
  const perMonth = (periodS: number) => SECONDS_PER_MONTH / periodS;
  const gc = periodSeconds(DEFAULT_GC_SCHEDULE);
  const launches = LAUNCHES_PER_MONTH_AT_SCALE;
  const durable = durableAtScale(durableCase).execution;
  return [
    {
      name: 'idle',
      nodes: 0,
      nodePools: 1,
      queueMessages: 0,
      durableExecutions: 0,
      executions: [
        {
          name: `sweep every ${sweepSeconds} s`,
          perMonth: perMonth(sweepSeconds),
          seconds: 0.05,
          alwaysReady: false,
        },
        {
          name: `orphan VM collection every ${gc / 60} min`,
          perMonth: perMonth(gc),
          seconds: 0.5,
          alwaysReady: false,
        },
      ],
    },
    {
      name: '1,000 nodes',
      nodes: 1000,
      nodePools: 3,
      queueMessages: launches * 12,
      durableExecutions: durable.perMonth,
      executions: [
        {
          name: `sweep every ${sweepSeconds} s`,
          perMonth: perMonth(sweepSeconds),
          seconds: 0.5,
          alwaysReady: false,
        },
        {
          name: `orphan VM collection every ${gc / 60} min`,
          perMonth: perMonth(gc),
          seconds: 3,
          alwaysReady: false,
        },
        { name: 'queue messages (12 per launch)', perMonth: launches * 12, seconds: 0.2, alwaysReady: true },
        durable,
      ],
    },
  ];
}

function usd(value: number): string {
  return `${value < 0 ? '−' : ''}$${Math.abs(value).toFixed(2)}`;
}

/** A unit price without binary-float noise (0.39999999999999997 → 0.4). */
function price(value: number): string {
  return String(Number(value.toPrecision(6)));
}

function printCost(title: string, cost: FlexCost): void {
  console.log(`  ${title}: ${usd(cost.totalUsd)} / month`);
  for (const line of cost.lines)
    console.log(`    ${line.item.padEnd(80)} ${line.quantity.padEnd(32)} ${usd(line.usd)}`);
}

export async function runCostBench(): Promise<void> {
  printDurableBackendSizing();
  const durableCase = measuredCase(process.env['COST_VM_CREATION_SECONDS']);
  const external = process.env['RETAIL_PRICES_ENDPOINT'];
  const emulator = external ? undefined : await startArmEmulator();
  try {
    const endpoint = external ?? emulator?.url ?? '';
    const getJson = httpGetJson(emulator?.caCertPem);
    const items = await fetchRetailPrices(
      endpoint,
      `serviceName eq 'Functions' and armRegionName eq '${REGION}'`,
      getJson,
    );
    const prices = flexPricesFrom(items);
    if ('missing' in prices)
      throw new Error(`Retail Prices has no Flex Consumption meter ${prices.missing.join(', ')}`);
    const book = refreshedPriceBook(
      REGION,
      await fetchRetailPriceItems(endpoint, REGION, getJson),
      new Date().toISOString(),
    );
    const nodePrice = book?.onDemand.get(SYSTEM_NODE);
    if (nodePrice === undefined)
      throw new Error(`Retail Prices has no on-demand price for ${SYSTEM_NODE} in ${REGION}`);

    console.log(
      `\n== cost: Flex Consumption (${REGION}, prices from ${external ?? "the ARM emulator's Retail Prices API"})`,
    );
    printPrices(prices);
    printDurableInputs(durableAtScale(durableCase));
    const sweep = periodSeconds(DEFAULT_SWEEP_SCHEDULE);
    for (const scenario of scenarios(sweep, durableCase)) {
      console.log(`\n ${scenario.name}, instance memory ${INSTANCE_MEMORY_GIB} GiB:`);
      printCost(
        'always ready 1 queue + 1 durable (default)',
        flexMonthlyCost(
          {
            instanceMemoryGib: INSTANCE_MEMORY_GIB,
            alwaysReadyInstances: 2,
            executions: scenario.executions,
          },
          prices,
        ),
      );
      printCost(
        'no always ready (cold start on the first event)',
        flexMonthlyCost(
          {
            instanceMemoryGib: INSTANCE_MEMORY_GIB,
            alwaysReadyInstances: 0,
            executions: scenario.executions.map((e) => ({ ...e, alwaysReady: false })),
          },
          prices,
        ),
      );
    }
    const karpenter = selfHostedMonthlyCost({
      replicas: 2,
      vcpuPerReplica: 1,
      gibPerReplica: 1,
      node: { name: `${SYSTEM_NODE} at ${usd(nodePrice)}/h`, usdPerHour: nodePrice, vcpus: 4, gib: 16 },
    });
    const polling = hostPolling();
    const bills: WholeBill[] = [];
    for (const scenario of scenarios(sweep, durableCase)) {
      const workload: Workload = {
        executions: scenario.executions.reduce((sum, e) => sum + e.perMonth, 0),
        queueMessages: scenario.queueMessages,
        durableExecutions: scenario.durableExecutions,
      };
      const volume = await measureTelemetry({
        nodes: scenario.nodes,
        nodePools: scenario.nodePools,
        perNode: false,
      });
      const telemetry = telemetryIngestion(volume, workload);
      const storage = storageTransactions(polling, workload);
      console.log(`\n ${scenario.name}: telemetry (Application Insights) and storage transactions`);
      printLines(`telemetry ingestion: ${usd(totalUsd(telemetry))} / month`, telemetry);
      printLines('for comparison, not in the bill:', [prometheusIngestion(volume)]);
      printLines(`storage transactions: ${usd(totalUsd(storage))} / month`, storage);
      const flex = (alwaysReady: boolean) =>
        flexMonthlyCost(
          {
            instanceMemoryGib: INSTANCE_MEMORY_GIB,
            alwaysReadyInstances: alwaysReady ? 2 : 0,
            executions: alwaysReady
              ? scenario.executions
              : scenario.executions.map((e) => ({ ...e, alwaysReady: false })),
          },
          prices,
        ).totalUsd;
      bills.push({
        scenario: scenario.name,
        flex: flex(true),
        flexCold: flex(false),
        telemetry: totalUsd(telemetry),
        storage: totalUsd(storage),
      });
    }
    printWholeBill(bills, karpenter.totalUsd);
    console.log('\n sweep period at idle, default always ready:');
    for (const seconds of [5, 15, 30, 60]) {
      const idle = scenarios(seconds, durableCase)[0];
      const cost = flexMonthlyCost(
        {
          instanceMemoryGib: INSTANCE_MEMORY_GIB,
          alwaysReadyInstances: 2,
          executions: idle?.executions ?? [],
        },
        prices,
      );
      console.log(`    every ${String(seconds).padStart(2)} s: ${usd(cost.totalUsd)} / month`);
    }
    console.log('');
    printCost("self-hosted Karpenter (its chart's default requests, whatever the cluster size)", karpenter);
  } finally {
    await emulator?.stop();
  }
}

function printLines(title: string, lines: readonly CostLine[]): void {
  console.log(`  ${title}`);
  for (const line of lines)
    console.log(`    ${line.item.padEnd(78)} ${line.quantity.padEnd(20)} ${usd(line.usd)}`);
}

interface WholeBill {
  scenario: string;
  /** Flex Consumption with the default always-ready instances, and with none. */
  flex: number;
  flexCold: number;
  telemetry: number;
  storage: number;
}

/** The whole bill beside self-hosted Karpenter and NAP, as a Markdown table (docs/cost.md carries it). */
function printWholeBill(bills: readonly WholeBill[], karpenter: number): void {
  const columns = bills.map((b) => b.scenario);
  const rows: [string, (b: WholeBill) => number][] = [
    ['Flex Consumption, 1 queue + 1 durable always ready (default)', (b) => b.flex],
    ['telemetry ingestion (Application Insights)', (b) => b.telemetry],
    ['storage transactions (Durable backend, queue trigger)', (b) => b.storage],
    ['**whole bill, default**', (b) => b.flex + b.telemetry + b.storage],
    ['whole bill, no always-ready instances (cold starts)', (b) => b.flexCold + b.telemetry + b.storage],
    ['self-hosted Karpenter: 2 controller pods on a system node', () => karpenter],
    ['AKS node auto-provisioning: controller run by AKS, not billed', () => 0],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  console.log(`\n whole bill (USD a month; nodes themselves not included):\n`);
  console.log(`| ${''.padEnd(width)} | ${columns.map((c) => c.padStart(11)).join(' | ')} |`);
  console.log(`| ${'-'.repeat(width)} | ${columns.map(() => '-'.repeat(11)).join(' | ')} |`);
  for (const [label, value] of rows)
    console.log(`| ${label.padEnd(width)} | ${bills.map((b) => usd(value(b)).padStart(11)).join(' | ')} |`);
  const atScale = bills.at(-1);
  if (!atScale) return;
  const whole = atScale.flex + atScale.telemetry + atScale.storage;
  const cold = atScale.flexCold + atScale.telemetry + atScale.storage;
  console.log(
    `\n goal, the whole bill at ${atScale.scenario} below self-hosted Karpenter's ${usd(karpenter)}: ` +
      `default ${usd(whole)}, ${whole < karpenter ? 'met' : 'NOT met'}; ` +
      `without always-ready instances ${usd(cold)}, ${cold < karpenter ? 'met' : 'NOT met'}`,
  );
}

/** Where the Durable group's line comes from: the measured case, the waits' durations, their overlap. */
function printDurableInputs(line: DurableLine): void {
  const { shape } = line;
  const counts = Object.entries(shape.measured.byOrchestration)
    .map(([name, actions]) => `${name} ${actions}`)
    .join(', ');
  const waits = shape.waits
    .map((w) => `${w.activity} ${w.secondsPerCall.map((s) => Math.round(s)).join(' + ')} s (${w.source})`)
    .join('; ');
  console.log(
    [
      `  durable executions per launch: ${shape.executions}, the measured actions at VM creation ${shape.measured.vmCreationSeconds} s (${counts}; re-measure: ${shape.measured.remeasure}; COST_VM_CREATION_SECONDS picks another measured case),`,
      `  ${shape.episodes} of them orchestrator episodes billed 1 s each, the rest waits billed as execution time: ${waits};`,
      `  at 1,000 nodes ${line.waitsAtOnce.toFixed(2)} waits at once on average, ${line.share === 1 ? 'so each is billed alone' : `each billed ${line.share.toFixed(3)} of its seconds`} (up to ${activitySlotsPerInstance()} share an instance: host.json maxConcurrentActivityFunctions)`,
    ].join('\n'),
  );
}

function printPrices(prices: FlexPrices): void {
  console.log(
    [
      `  prices (USD): on demand ${price(prices.onDemandPerGibSecond)}/GiB-s and ${price(prices.onDemandPerExecution * 1e6)}/M runs;`,
      `  always ready ${price(prices.alwaysReadyBaselinePerGibSecond)}/GiB-s baseline, ${price(prices.alwaysReadyPerGibSecond)}/GiB-s busy, ${price(prices.alwaysReadyPerExecution * 1e6)}/M runs;`,
      '  every run billed at least 1 s; a month is 730 h; on-demand free grant 100,000 GiB-s and 250,000 runs',
    ].join('\n'),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runCostBench();
