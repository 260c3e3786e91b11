// A durable workflow rides out an outage: an activity that meets refused connections, timeouts and 503s
// answers "transient" and its orchestration waits on durable timers and calls it again until it succeeds,
// in the in-process host driven by durable-functions' own replay engine (over a real Azurite); an error
// that is not transient still fails the orchestration at once. The failing requests are simulated by the
// activity itself: the errors are the shapes the Kubernetes client, fetch and the Azure SDK throw.
import type { OrchestrationContext } from 'durable-functions';
import { ApiException } from '@kubernetes/client-node';
import { RestError } from '@azure/core-rest-pipeline';
import { describe, expect, it } from 'vitest';
import { TransientCloudError } from '../../shared/cloudprovider/types.js';
import { createScaledClock, type HostEvent } from '../../local/host/index.js';
import {
  answeringTransientErrors,
  callActivityThroughOutages,
  isTransientRequestError,
} from '../../shared/lifecycle/durable/outage-retry.js';
import { silentLogger } from '../../shared/observability/logger.js';
import { activity, type FunctionDefinition } from '../../shared/runtime/definitions.js';
import { useAzurite } from '../support/azurite.js';
import { nextHostEvent, useLocalHosts } from '../support/local-hosts.js';

const connectionString = useAzurite();
const createHost = useLocalHosts(connectionString);

const refused = () =>
  new TypeError('fetch failed', { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) });
const timedOut = () => Object.assign(new Error('The operation was aborted'), { name: 'AbortError' });
const unavailable = () => new ApiException(503, 'Service Unavailable', '', {});

describe('what counts as transient', () => {
  it("refused and reset connections, timeouts, 429 and 5xx of Kubernetes, the provider's transient error; not 4xx or bugs", () => {
    expect(isTransientRequestError(refused())).toBe(true);
    expect(isTransientRequestError(timedOut())).toBe(true);
    expect(isTransientRequestError(unavailable())).toBe(true);
    expect(isTransientRequestError(new ApiException(429, 'Too Many Requests', '', {}))).toBe(true);
    // The cloud provider's own type for a cloud request that may succeed later (ARM's 429, 5xx, no answer).
    const armBusy = new RestError('busy', { statusCode: 500 });
    expect(isTransientRequestError(new TransientCloudError('busy', undefined, { cause: armBusy }))).toBe(
      true,
    );
    expect(isTransientRequestError(new ApiException(403, 'Forbidden', '', {}))).toBe(false);
    expect(isTransientRequestError(new ApiException(409, 'Conflict', '', {}))).toBe(false);
    expect(isTransientRequestError(new RestError('bad', { statusCode: 400 }))).toBe(false);
    // ARM's own errors are the provider's to classify: the lifecycle recognises only the seam's type.
    expect(isTransientRequestError(armBusy)).toBe(false);
    expect(isTransientRequestError(new TypeError('undefined is not a function'))).toBe(false);
  });
});

describe('an orchestration through an outage', () => {
  const finished = (instanceId: string) => (event: HostEvent) =>
    (event.type === 'orchestration.completed' || event.type === 'orchestration.failed') &&
    event.instanceId === instanceId;

  function definitions(failures: (() => Error)[]): {
    definitions: FunctionDefinition[];
    calls: () => number;
  } {
    let calls = 0;
    return {
      calls: () => calls,
      definitions: [
        activity(
          'Flaky',
          answeringTransientErrors(async (input: { value: number }) => {
            const failure = failures[calls++];
            if (failure) throw failure();
            return input.value + 1;
          }),
        ),
        {
          kind: 'orchestration',
          name: 'ThroughOutage',
          handler: function* (context: OrchestrationContext) {
            const value = yield* callActivityThroughOutages<number>(context, 'Flaky', { value: 41 });
            return { value };
          },
        },
      ],
    };
  }

  it('waits out refused connections, a timeout and a 503, then completes with the result', async () => {
    const flaky = definitions([refused, refused, timedOut, unavailable]);
    const host = createHost({
      definitions: flaky.definitions,
      clock: createScaledClock(600),
      log: silentLogger,
    });
    await host.start();
    const done = nextHostEvent(host, finished('outage-1'));
    await host.orchestrations.startNew('ThroughOutage', { instanceId: 'outage-1' });
    await done;
    const status = await host.orchestrations.getStatus('outage-1');
    expect(status?.runtimeStatus).toBe('Completed');
    expect(status?.output).toEqual({ value: 42 });
    expect(flaky.calls()).toBe(5);
  });

  it('returns what an activity that answers nothing answers, at once (its answer loses `value` in JSON)', async () => {
    let calls = 0;
    const host = createHost({
      definitions: [
        activity(
          'Quiet',
          answeringTransientErrors(async () => {
            calls++;
          }),
        ),
        {
          kind: 'orchestration',
          name: 'CallsQuiet',
          handler: function* (context: OrchestrationContext) {
            const value: unknown = yield* callActivityThroughOutages(context, 'Quiet', {});
            return { value: value ?? 'nothing' };
          },
        },
      ],
      clock: createScaledClock(600),
      log: silentLogger,
    });
    await host.start();
    const done = nextHostEvent(host, finished('outage-3'));
    await host.orchestrations.startNew('CallsQuiet', { instanceId: 'outage-3' });
    await done;
    const status = await host.orchestrations.getStatus('outage-3');
    expect(status?.runtimeStatus).toBe('Completed');
    expect(status?.output).toEqual({ value: 'nothing' });
    expect(calls).toBe(1);
  });

  it('fails at once on an error that is not transient', async () => {
    const flaky = definitions([() => new ApiException(422, 'Unprocessable', '', {})]);
    const host = createHost({
      definitions: flaky.definitions,
      clock: createScaledClock(600),
      log: silentLogger,
    });
    await host.start();
    const done = nextHostEvent(host, finished('outage-2'));
    await host.orchestrations.startNew('ThroughOutage', { instanceId: 'outage-2' });
    await done;
    expect((await host.orchestrations.getStatus('outage-2'))?.runtimeStatus).toBe('Failed');
    expect(flaky.calls()).toBe(1);
  });
});
