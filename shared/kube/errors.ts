// Kubernetes API errors as the domain cares about them: not found, conflict (optimistic concurrency), gone.
// Two different answers share HTTP 409: AlreadyExists (a create found the name taken: adopt what is there)
// and Conflict (a write's resourceVersion or precondition is stale: re-read and decide again). They are
// told apart by the Status body's `reason`; an error without one (the simulator's own client) counts as
// either, since its caller knows which request it made.
import { ApiException } from '@kubernetes/client-node';

export function statusCodeOf(error: unknown): number | undefined {
  if (error instanceof ApiException) return error.code;
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'number') {
    return error.code;
  }
  return undefined;
}

export const isNotFound = (error: unknown): boolean => statusCodeOf(error) === 404;
/** The `reason` of the API server's Status body (`AlreadyExists`, `Conflict`, …), when there is one. */
export function statusReasonOf(error: unknown): string | undefined {
  return statusField(error, 'reason');
}

const is409With = (error: unknown, reason: string): boolean => {
  if (statusCodeOf(error) !== 409) return false;
  const actual = statusReasonOf(error);
  return actual === undefined || actual === reason;
};

/** A write refused because what it was computed from is stale: re-read and decide again. */
export const isConflict = (error: unknown): boolean => is409With(error, 'Conflict');
/** A create refused because the name is taken: what exists is read (and adopted, when it is ours). */
export const isAlreadyExists = (error: unknown): boolean => is409With(error, 'AlreadyExists');

/** The API server's own message (from its Status body) when there is one, else the error's message. */
export function kubeErrorMessage(error: unknown): string {
  return statusField(error, 'message') ?? (error instanceof Error ? error.message : String(error));
}

/** A string field of the Status body an ApiException carries. */
function statusField(error: unknown, field: 'reason' | 'message'): string | undefined {
  if (!(error instanceof ApiException)) return undefined;
  const body: unknown = typeof error.body === 'string' ? safeJson(error.body) : error.body;
  if (typeof body !== 'object' || body === null || !(field in body)) return undefined;
  const value: unknown = (body as Record<string, unknown>)[field];
  return typeof value === 'string' ? value : undefined;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
