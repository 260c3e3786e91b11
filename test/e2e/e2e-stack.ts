// The end-to-end tests play the same scenarios as `npm start`, at high speed, on the test run's shared
// control plane and Azurite. Each test file starts the rest of the stack (ARM emulator, Function App in the
// in-process host, event bridge, kubelet simulator) scoped to its own objects, so files running in
// parallel do not act on each other's NodeClaims. Nothing is mocked.
import { expect, inject } from 'vitest';
import {
  createActivityRelay,
  playScenario,
  type Scenario,
  type ScenarioReport,
} from '../../local/scenarios/index.js';
import type { DurablePollingStats } from '../../local/host/index.js';
import { startLocalStack, type LocalStack } from '../../local/stack/local-stack.js';
import { createLogger } from '../../shared/observability/logger.js';
import { devCa } from '../support/dev-ca.js';
import { shippedIdentities } from '../support/identities.js';

/** Fast enough for a test, slow enough that the phases stay distinct on a busy two-core machine. */
export const E2E_SPEED = 8;

/**
 * What a failed scenario prints of the stack's log, so a CI log shows where it stuck: every warning and
 * error of the run (up to a bound) and the last lines of any level.
 */
const WARNINGS_ON_FAILURE = 200;
const LAST_LINES_ON_FAILURE = 150;

export interface EndToEndReport extends ScenarioReport {
  /** How long the Durable messages of the run waited for their queue's poll (host.json's pacing). */
  durablePolling: DurablePollingStats | undefined;
}

export async function playEndToEnd(scenario: Scenario): Promise<EndToEndReport> {
  const ca = await devCa();
  const relay = createActivityRelay();
  const recent: RecentLog = { warnings: [], last: [] };
  const log = createLogger({
    component: 'e2e',
    sink: (level, line) => {
      if (process.env.TEST_LOGS) process.stderr.write(line + '\n');
      if (level === 'warn' || level === 'error') keepLast(recent.warnings, line, WARNINGS_ON_FAILURE);
      keepLast(recent.last, line, LAST_LINES_ON_FAILURE);
    },
  });
  let stack: LocalStack | undefined;
  try {
    stack = await startLocalStack({
      speed: E2E_SPEED,
      scoped: true,
      shared: {
        kubeconfigPath: inject('kubeconfigPath'),
        identities: shippedIdentities(),
        storageConnectionString: inject('azuriteConnectionString'),
        ca,
      },
      log,
      onActivity: relay.listener,
    });
    const report = await playScenario(scenario, stack, { relay });
    console.log(report.summaryText);
    if (!report.passed) printRecentLog(recent);
    expectStorageAsShipped(stack);
    return { ...report, durablePolling: stack.app?.host.durablePollingStats() };
  } catch (error) {
    printRecentLog(recent);
    throw error;
  } finally {
    await stack?.stop();
  }
}

interface RecentLog {
  warnings: string[];
  last: string[];
}

function keepLast(lines: string[], line: string, bound: number): void {
  lines.push(line);
  if (lines.length > bound) lines.shift();
}

function printRecentLog({ warnings, last }: RecentLog): void {
  console.log(
    [
      `the stack's warnings and errors (the last ${warnings.length}):`,
      ...warnings,
      `the stack's last ${last.length} log lines (info and above):`,
      ...last,
    ].join('\n'),
  );
}

/** Each invariant as its own expectation, so a failure names the invariant and its evidence. */
export function expectInvariantsHold(report: ScenarioReport): void {
  expect(report.outcome.invariants.length).toBeGreaterThan(0);
  for (const invariant of report.outcome.invariants) {
    expect(invariant.holds, `${invariant.name}: ${invariant.detail}`).toBe(true);
  }
}

/**
 * The bridge published and the host read its queue as their identities, through the authorizing
 * storage front with the roles of infra/azure-roles.json, and the front refused nothing.
 */
export function expectStorageAsShipped(stack: LocalStack): void {
  expect(stack.storageFront, 'the stack reaches storage through the storage front').toBeDefined();
  const tally = stack.storageFront?.tally() ?? [];
  expect(tally.filter((entry) => entry.status !== 'allowed')).toEqual([]);
  const count = (principal: string, operation: string): number =>
    tally.find((entry) => entry.principal === principal && entry.operation === operation)?.count ?? 0;
  expect(count('bridge', 'Put Message'), 'the bridge sent through the front').toBeGreaterThan(0);
  expect(count('functionApp', 'Get Messages'), 'the host received through the front').toBeGreaterThan(0);
}
