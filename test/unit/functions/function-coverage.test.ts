// Every activity and orchestrator the app registers (functions/definitions.ts) has unit tests in this
// folder: each test file titles a function's describe block covers(<name>), and this test reads the
// files and fails, naming the function, when an activity or orchestrator is added without one.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { durableFunctionNames } from '../../support/app-functions.js';
import { coveredIn } from '../../support/function-coverage.js';

const folder = new URL('./', import.meta.url);
const testFiles = readdirSync(folder).filter(
  (file) => file.endsWith('.test.ts') && file !== 'function-coverage.test.ts',
);
const covered = new Set(testFiles.flatMap((file) => coveredIn(readFileSync(new URL(file, folder), 'utf8'))));
const { activities, orchestrations } = durableFunctionNames();

describe('unit tests of the app’s durable functions', () => {
  test('every activity in appDefinitions has a covers() describe block', () => {
    expect(activities.filter((name) => !covered.has(name))).toEqual([]);
  });

  test('every orchestrator in appDefinitions has a covers() describe block', () => {
    expect(orchestrations.filter((name) => !covered.has(name))).toEqual([]);
  });

  test('the scan reads covers() calls: a source naming a function by constant or string is found', () => {
    expect(coveredIn("describe(covers(TerminationNames.drain), () => {}); covers('launchMonitor')")).toEqual([
      'drainNodeClaim',
      'launchMonitor',
    ]);
    expect(() => coveredIn('covers(NoSuchNames.thing)')).toThrow('cannot resolve');
    // The table is not empty, so the two tests above compare real lists.
    expect(activities.length).toBeGreaterThan(0);
    expect(orchestrations.length).toBeGreaterThan(0);
  });
});
