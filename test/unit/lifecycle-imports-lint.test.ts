// The lint rule that keeps the lifecycle cloud-agnostic (eslint.config.js): a file under shared/lifecycle/
// that imports anything Azure (the SDK, the ARM adapters, the Azure provider's own files) fails ESLint,
// and one that imports only the cloud provider's seam passes. Run through ESLint's Node API on fixture
// sources placed, virtually, under shared/lifecycle/, so the rule is checked as the repository applies it.
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, test } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: root });

/** The rule's messages for `source` linted as if it were `path` in the repository. */
async function restrictedImports(source: string, path: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: `${root}${path}` });
  return (result?.messages ?? [])
    .filter((message) => message.ruleId === 'no-restricted-imports')
    .map((message) => message.message);
}

const importingAzure = `// A fixture lifecycle file that reaches past the seam.
import type { VirtualMachine } from '@azure/arm-compute';
import { isTransient } from '../../azure/virtual-machines.js';
import { capacityOptions } from '../../cloudprovider/vm-body.js';
import { azureCloudProvider } from '../../cloudprovider/azure.js';

export const leaks = [isTransient, capacityOptions, azureCloudProvider];
export type Leak = VirtualMachine;
`;

const clean = `// A fixture lifecycle file that asks the cloud provider only.
import { isTransientCloudError, type CloudProvider } from '../../cloudprovider/types.js';
import { vmNameFor } from '../../decisions/vm-spec.js';

export const seam = { isTransientCloudError, vmNameFor };
export type Seam = CloudProvider;
`;

describe('the lifecycle imports nothing Azure', () => {
  test('a lifecycle file importing the Azure SDK, an ARM adapter or the Azure provider fails', async () => {
    const messages = await restrictedImports(importingAzure, 'shared/lifecycle/launch/fixture-azure.ts');
    expect(messages).toHaveLength(4);
    expect(messages.every((m) => /imports nothing Azure|only its seam/.test(m))).toBe(true);
  });

  test('a lifecycle file importing only the seam passes', async () => {
    expect(await restrictedImports(clean, 'shared/lifecycle/launch/fixture-clean.ts')).toEqual([]);
  });

  test('outside the lifecycle the same imports are allowed', async () => {
    expect(await restrictedImports(importingAzure, 'shared/cloudprovider/fixture-azure.ts')).toEqual([]);
  });
});
