// The consolidation command memory against the real API server, written as the Function App's shipped
// identity: a failed command is remembered on its NodePool (one annotation, a guarded merge patch that
// never touches the spec), held for its backoff, and forgotten after a success. The end-to-end tests never
// make a consolidation command fail, so this is where the ClusterRole's `patch` on NodePools is needed.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CONSOLIDATION_FAILURES_ANNOTATION } from '../../shared/decisions/consolidation/command-memory.js';
import {
  forgetConsolidationFailures,
  heldConsolidationCommands,
  rememberFailedConsolidation,
} from '../../shared/lifecycle/disruption/command-memory.js';
import type { LifecycleDependencies } from '../../shared/lifecycle/dependencies.js';
import { nodePool } from '../support/fixtures.js';
import { adminAccess, type AdminAccess } from '../support/identities.js';
import { testDependencies, uniqueSuffix } from './registration-support.js';

describe('consolidation command memory', () => {
  let deps: LifecycleDependencies;
  let admin: AdminAccess;
  const name = `memory-${uniqueSuffix()}`;

  beforeAll(async () => {
    ({ deps } = testDependencies({
      kubeconfigPath: inject('kubeconfigPath'),
      appKubeconfigPath: inject('functionsKubeconfigPath'),
      caCertPath: inject('devCaCertPath'),
    }));
    admin = adminAccess();
    await admin.objects.nodePools.create(nodePool(name, 'default', { consolidateAfter: '30s' }));
  });
  afterAll(async () => {
    await admin?.objects.nodePools.delete(name).catch(() => undefined);
  });

  it('remembers a failed command on its NodePool, holds it for its backoff, and forgets it after a success', async () => {
    const failed = await rememberFailedConsolidation(deps, name, {
      key: 'replace:a,b->Standard_D2as_v5',
      why: 'the replacement was refused',
    });
    expect(failed?.key).toBe('replace:a,b->Standard_D2as_v5');
    const stored = await admin.objects.nodePools.get(name);
    expect(stored?.metadata.annotations?.[CONSOLIDATION_FAILURES_ANNOTATION]).toContain('Standard_D2as_v5');
    expect(stored?.spec.disruption?.consolidateAfter).toBe('30s');
    expect([...heldConsolidationCommands(stored!, deps.now())]).toEqual(['replace:a,b->Standard_D2as_v5']);

    await forgetConsolidationFailures(deps, name);
    const forgotten = await admin.objects.nodePools.get(name);
    expect(forgotten?.metadata.annotations?.[CONSOLIDATION_FAILURES_ANNOTATION]).toBe(undefined);
  });
});
