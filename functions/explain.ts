// The explain HTTP functions: GET explain/pod/{namespace}/{name}, explain/node/{name} and
// explain/nodepool/{name} answer why, from the decision records, to a caller who proves who they are
// with a Microsoft Entra ID token and whom the cluster's RBAC lets read that object; POST explain/what-if
// answers what applying some objects would do, to a caller the cluster would let apply them
// (docs/explain.md).
import { JwksCache, httpJwksSource } from '../shared/azure/entra-token.js';
import {
  EXPLAIN_ROUTES,
  handleExplainRequest,
  handleWhatIfRequest,
  WHAT_IF_ROUTE,
  type ExplainHttpDependencies,
  type ExplainSubjectKind,
} from '../shared/access/explain-http.js';
import { kubeAccessReviews } from '../shared/kube/access-reviews.js';
import type { DependencySource, LifecycleDependencies } from '../shared/lifecycle/dependencies.js';
import { explainSubject } from '../shared/lifecycle/explain/explain-subject.js';
import { whatIf } from '../shared/lifecycle/explain/what-if.js';
import type { FunctionDefinition } from '../shared/runtime/definitions.js';
import { ExplainNames } from '../shared/runtime/function-names.js';

const KINDS: readonly ExplainSubjectKind[] = ['pod', 'node', 'nodepool'];

type Access = Omit<ExplainHttpDependencies, 'log'>;

export function explainFunctions(getDependencies: DependencySource): readonly FunctionDefinition[] {
  // One key cache and one review client per set of dependencies (one per process in Azure; the local
  // host may run several apps in one process): the keys are fetched once, not per request.
  const built = new WeakMap<LifecycleDependencies, Access>();
  const accessOf = (deps: LifecycleDependencies): Access => {
    let access = built.get(deps);
    if (!access) {
      const auth = deps.settings.explain;
      access = {
        auth: auth ? { settings: auth, keys: new JwksCache(httpJwksSource(auth.jwksUri)) } : undefined,
        reviews: kubeAccessReviews(deps.kube),
        now: deps.now,
        answer: (subject) => explainSubject(deps.decisionRecords, subject),
      };
      built.set(deps, access);
    }
    return access;
  };
  const answers = KINDS.map((kind): FunctionDefinition => ({
    kind: 'http',
    name: ExplainNames[kind],
    route: EXPLAIN_ROUTES[kind],
    methods: ['GET'],
    handler: (request, context) =>
      handleExplainRequest({ ...accessOf(getDependencies()), log: context.log }, kind, request),
  }));
  const whatIfFunction: FunctionDefinition = {
    kind: 'http',
    name: ExplainNames.whatIf,
    route: WHAT_IF_ROUTE,
    methods: ['POST'],
    handler: (request, context) => {
      const deps = getDependencies();
      return handleWhatIfRequest(
        { ...accessOf(deps), log: context.log, whatIf: (objects) => whatIf(deps, objects) },
        request,
      );
    },
  };
  return [...answers, whatIfFunction];
}
