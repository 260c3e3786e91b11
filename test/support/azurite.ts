// Azurite for test files that talk to Storage directly: the global setup's shared instance when it provides
// one, otherwise one this file starts and stops itself, so the file also runs on its own.
import { afterAll, beforeAll, inject } from 'vitest';
import { startAzurite, type RunningAzurite } from '../../local/azurite/launcher.js';

/**
 * Registers the hooks that provide Azurite; call it at the top of a file or a describe block. The returned
 * function gives the connection string once the beforeAll hook has run.
 */
export function useAzurite(): () => string {
  let ownAzurite: RunningAzurite | undefined;
  let connectionString: string | undefined;

  beforeAll(async () => {
    const provided: string | undefined = inject('azuriteConnectionString');
    if (provided) connectionString = provided;
    else {
      ownAzurite = await startAzurite();
      connectionString = ownAzurite.connectionString;
    }
  });

  afterAll(async () => {
    await ownAzurite?.stop();
  });

  return () => {
    if (connectionString === undefined)
      throw new Error('Azurite is not ready: call this inside a test or hook');
    return connectionString;
  };
}
