// A disruption command's workflow as both of its sides name it: the disruption step, which starts it and
// tends the NodeClaims it marked, and the executor (executor.ts), which is it. The instance ID is
// deterministic per command (per candidate or per NodePool, the method's workflow key), so a sweep that
// runs again while it is in flight neither starts it twice nor starts another for the same candidate or
// NodePool; the input is what the step starts it with. Apart from the executor, so the step needs nothing
// of the workflow's own code.
import type { DisruptionCommand, WorkflowKey } from './methods/method.js';
import { methodNamed } from './methods/methods.js';

/** The workflow's input: the command and the timing it runs by (settings, fixed when it started). */
export interface ExecutorInput {
  command: DisruptionCommand;
  pollSeconds: number;
  /**
   * The second version's wait for a wake before it looks itself (REPLACEMENT_FALLBACK_SECONDS). Absent in
   * the input of a workflow started before the setting: it then waits 36 polls, as it did.
   */
  fallbackSeconds?: number;
  timeoutMinutes: number;
  /** Set when a previous execution continued as new while waiting for the replacements. */
  continued?: ExecutorProgress;
}

/** What an execution waiting for replacements hands the next over continue-as-new. */
export interface ExecutorProgress {
  /** When the wait for the replacements ends (RFC 3339), fixed when it began. */
  deadline: string;
  /** Indexes of the replacements already Initialized (not checked again). */
  initialized: number[];
  continuations: number;
}

/** `<prefix>-<uid>`: of the command's (only) candidate, or of its NodePool. */
export function instanceIdOf(
  workflow: WorkflowKey,
  keys: { candidateUid: string; nodePoolUid: string },
): string {
  return `${workflow.instancePrefix}-${workflow.per === 'candidate' ? keys.candidateUid : keys.nodePoolUid}`;
}

export function commandInstanceId(command: DisruptionCommand): string {
  const method = methodNamed(command.method);
  if (!method) throw new Error(`no disruption method named ${command.method}`);
  return instanceIdOf(method.workflow, {
    candidateUid: command.candidates[0]?.uid ?? '',
    nodePoolUid: command.nodePool.uid,
  });
}
