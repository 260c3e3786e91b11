// An error shaped as the Kubernetes client's: shared/kube/errors.ts reads its `code`, so the code under
// test sorts a fake's 404, 409 or 429 exactly as it sorts the API server's.
export class FakeApiError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}
