// The app's function table (functions/definitions.ts) built on the in-memory fakes, so a unit test takes
// an activity or an orchestrator by the name it is registered under and runs what the host would run,
// wrapping included, instead of the lifecycle function behind it. An activity's input and answer go
// through JSON, as the Durable runtime hands them over, so a handler that depended on a Date or a class
// instance surviving the trip would fail here as it would in Azure.
import { appDefinitions } from '../../functions/definitions.js';
import { silentLogger } from '../../shared/observability/logger.js';
import type {
  ActivityFunctionDefinition,
  FunctionDefinition,
  OrchestrationFunctionDefinition,
} from '../../shared/runtime/definitions.js';
import { FakeOrchestrations, type FakeLifecycle } from './fake-lifecycle.js';

/** The tag outage-tolerant activities wrap their answer in (shared/lifecycle's outage retry). */
const OUTAGE_TAG = 'outage-retry/v1';

/** What an activity answered: its value, or that it met a transient error its workflow waits out. */
export type ActivityAnswer = { value: unknown } | { transient: string };

export interface AppFunctions {
  definitions: readonly FunctionDefinition[];
  /** The client the activities start, query and terminate orchestrations through. */
  orchestrations: FakeOrchestrations;
  /** The raw JSON the activity registered under `name` answered for `input`, as history records it. */
  raw(name: string, input: unknown): Promise<unknown>;
  /** The activity's answer, unwrapped from the outage tag when it has one. */
  call(name: string, input: unknown): Promise<ActivityAnswer>;
  /** The activity's value; fails the test if it answered transient. */
  value<T>(name: string, input: unknown): Promise<T>;
  activity(name: string): ActivityFunctionDefinition;
  orchestration(name: string): OrchestrationFunctionDefinition;
}

const throughJson = (value: unknown): unknown =>
  value === undefined ? undefined : JSON.parse(JSON.stringify(value));

export function appFunctions(
  fake: FakeLifecycle,
  orchestrations: FakeOrchestrations = new FakeOrchestrations(),
): AppFunctions {
  const definitions = appDefinitions(() => fake.deps);
  const find = <K extends FunctionDefinition['kind']>(kind: K, name: string) => {
    const found = definitions.find((d) => d.name === name);
    if (!found || found.kind !== kind) throw new Error(`no ${kind} named ${name} in appDefinitions`);
    return found as Extract<FunctionDefinition, { kind: K }>;
  };
  let invocations = 0;
  const raw = async (name: string, input: unknown): Promise<unknown> => {
    invocations += 1;
    const result = await find('activity', name).handler(throughJson(input), {
      invocationId: `invocation-${invocations}`,
      functionName: name,
      log: silentLogger,
      orchestrations,
    });
    return throughJson(result);
  };
  const call = async (name: string, input: unknown): Promise<ActivityAnswer> => {
    const result = await raw(name, input);
    if (typeof result === 'object' && result !== null && (result as { tag?: unknown }).tag === OUTAGE_TAG) {
      const tagged = result as { value?: unknown; transient?: string };
      return tagged.transient !== undefined ? { transient: tagged.transient } : { value: tagged.value };
    }
    return { value: result };
  };
  return {
    definitions,
    orchestrations,
    raw,
    call,
    value: async <T>(name: string, input: unknown): Promise<T> => {
      const answer = await call(name, input);
      if ('transient' in answer) throw new Error(`${name} answered transient: ${answer.transient}`);
      return answer.value as T;
    },
    activity: (name) => find('activity', name),
    orchestration: (name) => find('orchestration', name),
  };
}

/** The names of every activity and orchestration in the app's table, by kind. */
export function durableFunctionNames(): { activities: string[]; orchestrations: string[] } {
  const definitions = appDefinitions(() => {
    throw new Error('only the names are read');
  });
  return {
    activities: definitions.filter((d) => d.kind === 'activity').map((d) => d.name),
    orchestrations: definitions.filter((d) => d.kind === 'orchestration').map((d) => d.name),
  };
}
