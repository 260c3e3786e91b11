// Kubernetes API errors as the domain cares about them: not found, conflict (optimistic concurrency), gone.
import { ApiException } from '@kubernetes/client-node';

export function statusCodeOf(error: unknown): number | undefined {
  if (error instanceof ApiException) return error.code;
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'number') {
    return error.code;
  }
  return undefined;
}

export const isNotFound = (error: unknown): boolean => statusCodeOf(error) === 404;
export const isConflict = (error: unknown): boolean => statusCodeOf(error) === 409;
export const isAlreadyExists = isConflict;

/** The API server's own message (from its Status body) when there is one, else the error's message. */
export function kubeErrorMessage(error: unknown): string {
  if (error instanceof ApiException) {
    const body: unknown = typeof error.body === 'string' ? safeJson(error.body) : error.body;
    if (typeof body === 'object' && body !== null && 'message' in body && typeof body.message === 'string') {
      return body.message;
    }
  }
  return error instanceof Error ? error.message : String(error);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
