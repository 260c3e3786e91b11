// The repair workflow driven step by step with a recording orchestration context: each activity it calls
// receives the input its registered function takes (functions/repair.ts). A spot eviction notice's path:
// begin, learn the preemption, launch the replacement, check it by name until Initialized, then delete
// the old NodeClaim with the replacement ready.
import { describe, expect, it } from 'vitest';
import type * as df from 'durable-functions';
import {
  repairOrchestrator,
  type RepairInput,
} from '../../shared/lifecycle/disruption/repair/repair-workflow.js';
import { RepairNames } from '../../shared/runtime/function-names.js';

interface Call {
  activity?: string;
  input?: unknown;
  timer?: Date;
}

function recordingContext(input: RepairInput, now: Date) {
  const calls: Call[] = [];
  const context = {
    df: {
      getInput: () => input,
      currentUtcDateTime: now,
      setCustomStatus: () => undefined,
      callActivity: (activity: string, activityInput: unknown) => {
        const call = { activity, input: activityInput };
        calls.push(call);
        return call;
      },
      createTimer: (at: Date) => {
        const call = { timer: at };
        calls.push(call);
        return call;
      },
    },
  } as unknown as df.OrchestrationContext;
  return { context, calls };
}

const input: RepairInput = {
  nodeClaim: { name: 'batch-1', uid: 'uid-1', nodePool: 'batch' },
  vmName: 'aks-batch-1',
  policy: {
    conditionType: 'PreemptionScheduled',
    conditionStatus: 'True',
    tolerationMs: 0,
    action: 'preempted',
  },
  condition: { type: 'PreemptionScheduled', status: 'True' },
  detail:
    'PreemptionScheduled=True past its 0s toleration (repair policy PreemptionScheduled=True:0s:preempted)',
  firstStep: 'preempted',
  previous: { rebootsTried: 0 },
  escalation: { maxReboots: 1, recoveryMs: 60_000 },
  pollSeconds: 1,
  drainBy: '2026-12-02T07:00:25Z',
  replacement: { name: 'batch-repl-1', nodePool: 'batch', replacementOf: 'batch-1', reason: 'Unhealthy' },
  replacementTimeoutMinutes: 15,
};

describe('the repair workflow', () => {
  it('checks its replacement by name, waits until it is Initialized, then replaces the old node', () => {
    const { context, calls } = recordingContext(input, new Date('2026-12-02T07:00:00Z'));
    const run = repairOrchestrator(context);
    const answers: Record<string, unknown> = {
      [RepairNames.begin]: 'ok',
      [RepairNames.learnPreemption]: null,
      [RepairNames.launchReplacement]: { status: 'Pending' },
    };
    let checks = 0;
    let step = run.next();
    while (!step.done) {
      const call = step.value as unknown as Call;
      let answer: unknown;
      if (call.activity === RepairNames.checkReplacement) {
        // The registered activity is (name: string) => checkReplacement(deps, name).
        expect(call.input).toBe('batch-repl-1');
        checks += 1;
        answer = checks < 2 ? { status: 'Pending' } : { status: 'Initialized' };
      } else if (call.activity !== undefined) {
        answer = answers[call.activity];
      }
      step = run.next(answer);
    }
    expect(checks).toBe(2);
    expect(step.value).toMatchObject({
      outcome: 'Replaced',
      replacement: 'batch-repl-1',
      replacementReady: true,
    });
    const replace = calls.find((c) => c.activity === RepairNames.replace);
    expect(replace?.input).toMatchObject({ replacementReady: true, why: 'spot eviction notice' });
  });
});
