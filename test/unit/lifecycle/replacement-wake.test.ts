// A replacement wakes the disruption command named in its annotation, with what was written on it; a
// NodeClaim that is no replacement wakes nothing; a command that has ended is no error; a running
// command that cannot be reached is logged for the fallback check, never thrown (the write that led to
// the wake has succeeded). The wake is raised only by the call that set Initialized=True.
import { describe, expect, test } from 'vitest';
import { DisruptionAnnotations } from '../../../shared/decisions/disruption-state.js';
import { wakeOnInitialized } from '../../../shared/lifecycle/node-join/initialized-wake.js';
import { wakeReplacementCommand } from '../../../shared/lifecycle/nodeclaims/replacement-wake.js';
import type { NodeClaim } from '../../../shared/models/karpenter.js';
import { createLogger, type LogLevel } from '../../../shared/observability/logger.js';
import type { OrchestrationClient, OrchestrationStatus } from '../../../shared/runtime/definitions.js';
import { DisruptionNames } from '../../../shared/runtime/function-names.js';
import { nodePool } from '../../support/fixtures.js';
import { initializedNodeClaim } from '../../support/method-pass.js';

const INSTANCE = 'drift-uid-old';

function replacement(annotated = true): NodeClaim {
  const claim = initializedNodeClaim('general-new', nodePool('general', 'default'));
  return annotated
    ? {
        ...claim,
        metadata: { ...claim.metadata, annotations: { [DisruptionAnnotations.command]: INSTANCE } },
      }
    : claim;
}

function client(options: { raise?: 'ok' | 'fail'; status?: OrchestrationStatus['runtimeStatus'] }) {
  const raised: { instanceId: string; eventName: string; data: unknown }[] = [];
  const orchestrations: OrchestrationClient = {
    startNew: () => Promise.reject(new Error('not used')),
    getStatus: (instanceId) =>
      Promise.resolve(
        options.status === undefined
          ? undefined
          : { instanceId, name: DisruptionNames.orchestration, runtimeStatus: options.status },
      ),
    raiseEvent: (instanceId, eventName, data) => {
      if (options.raise === 'fail') return Promise.reject(new Error('503 from the task hub'));
      raised.push({ instanceId, eventName, data });
      return Promise.resolve();
    },
    terminate: () => Promise.reject(new Error('not used')),
    purge: () => Promise.reject(new Error('not used')),
  };
  return { orchestrations, raised };
}

function logs() {
  const lines: { level: LogLevel; message: string }[] = [];
  const log = createLogger({
    component: 'test',
    minLevel: 'debug',
    sink: (level, line) => lines.push({ level, message: (JSON.parse(line) as { message: string }).message }),
  });
  return { log, warnings: () => lines.filter((l) => l.level === 'warn') };
}

describe('a replacement wakes its disruption command', () => {
  test('the annotated command gets the event, naming the replacement and what was written', async () => {
    const { orchestrations, raised } = client({ raise: 'ok', status: 'Running' });
    const { log } = logs();

    expect(await wakeReplacementCommand(orchestrations, log, replacement(), 'Failed')).toBe('woken');
    expect(raised).toEqual([
      {
        instanceId: INSTANCE,
        eventName: DisruptionNames.replacementChanged,
        data: { replacement: 'general-new', status: 'Failed' },
      },
    ]);
  });

  test('a NodeClaim without the annotation wakes nothing', async () => {
    const { orchestrations, raised } = client({ raise: 'ok' });
    expect(await wakeReplacementCommand(orchestrations, logs().log, replacement(false), 'Initialized')).toBe(
      'no-command',
    );
    expect(raised).toEqual([]);
  });

  test('a command that has ended or is gone is no error and no warning', async () => {
    for (const status of ['Completed', undefined] as const) {
      const { orchestrations } = client({ raise: 'fail', status });
      const { log, warnings } = logs();
      expect(await wakeReplacementCommand(orchestrations, log, replacement(), 'Initialized')).toBe(
        'command-ended',
      );
      expect(warnings()).toEqual([]);
    }
  });

  test('a running command that cannot be reached is a warning left to the fallback check, not a throw', async () => {
    const { orchestrations } = client({ raise: 'fail', status: 'Running' });
    const { log, warnings } = logs();
    expect(await wakeReplacementCommand(orchestrations, log, replacement(), 'Initialized')).toBe('unreached');
    expect(warnings()).toHaveLength(1);
  });

  test('after node-join, only the call that wrote Initialized=True wakes', async () => {
    const { orchestrations, raised } = client({ raise: 'ok', status: 'Running' });
    const { log } = logs();
    const nodeClaim = replacement();

    expect(
      await wakeOnInitialized(orchestrations, log, {
        outcome: 'initialized',
        nodeClaim,
        statusWritten: false,
      }),
    ).toBeUndefined();
    expect(
      await wakeOnInitialized(orchestrations, log, {
        outcome: 'waiting',
        nodeClaim,
        reason: 'NotReady',
        message: 'the node is not Ready',
      }),
    ).toBeUndefined();
    expect(
      await wakeOnInitialized(orchestrations, log, {
        outcome: 'initialized',
        nodeClaim,
        statusWritten: true,
      }),
    ).toBe('woken');
    expect(raised).toHaveLength(1);
  });
});
