// Which of the app's activities and orchestrators a unit test covers: a test file in test/unit/functions/
// titles the describe block of each function it tests `covers(<registered name>)`, the name written as a
// string or as a constant of shared/runtime/function-names.ts, and function-coverage.test.ts reads those
// files and fails, naming the function, for any activity or orchestrator of appDefinitions that no describe
// block covers. `covers` refuses a name the table does not register, so a renamed function cannot keep
// looking covered.
import * as FunctionNames from '../../shared/runtime/function-names.js';
import { durableFunctionNames } from './app-functions.js';

export function covers(name: string): string {
  const { activities, orchestrations } = durableFunctionNames();
  if (!activities.includes(name) && !orchestrations.includes(name)) {
    throw new Error(`appDefinitions registers no activity or orchestration named ${name}`);
  }
  return name;
}

/** The names a test file's source covers; a `covers(...)` whose argument cannot be resolved throws. */
export function coveredIn(source: string): string[] {
  const tables = FunctionNames as unknown as Record<string, Record<string, string> | undefined>;
  return [...source.matchAll(/\bcovers\(\s*([^)]*?)\s*\)/g)].map(([call, argument = '']) => {
    const literal = /^'([^']+)'$/.exec(argument);
    if (literal) return literal[1]!;
    const reference = /^(\w+)\.(\w+)$/.exec(argument);
    const name = reference ? tables[reference[1]!]?.[reference[2]!] : undefined;
    if (typeof name !== 'string') throw new Error(`cannot resolve ${call}`);
    return name;
  });
}
