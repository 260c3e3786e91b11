// Which of the app's activities and orchestrators a unit test covers: a test file in test/unit/functions/
// names each function it tests with `covers('<registered name>')` as its describe block's title, and
// function-coverage.test.ts reads those files and fails, naming the function, for any activity or
// orchestrator of appDefinitions that no describe block covers. `covers` refuses a name the table does
// not register, so a renamed function cannot keep looking covered.
import { durableFunctionNames } from './app-functions.js';

/** How a covering describe block is written, for the coverage test to find it. */
export const COVERS_PATTERN = /covers\('([^']+)'\)/g;

export function covers(name: string): string {
  const { activities, orchestrations } = durableFunctionNames();
  if (!activities.includes(name) && !orchestrations.includes(name)) {
    throw new Error(`appDefinitions registers no activity or orchestration named ${name}`);
  }
  return name;
}
