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

/** The lines of `source`, linted as if it were `path`, on which the rule reported an import. */
async function restrictedLines(source: string, path: string): Promise<number[]> {
  const [result] = await eslint.lintText(source, { filePath: `${root}${path}` });
  const lines = (result?.messages ?? [])
    .filter((message) => message.ruleId === 'no-restricted-imports')
    .map((message) => message.line);
  return [...new Set(lines)];
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
import { LAUNCH_ATTEMPT_ANNOTATION } from '../../decisions/launch-annotations.js';

export const seam = { isTransientCloudError, LAUNCH_ATTEMPT_ANNOTATION };
export type Seam = CloudProvider;
`;

const importingAzureDecisions = `// A fixture lifecycle file that takes Azure's own decisions instead of asking the provider.
import { vmNameFor } from '../../cloudprovider/azure/decisions/vm-spec.js';
import { vmOwnership } from '../../cloudprovider/azure/decisions/vm-ownership.js';
import { nodeClassProblems } from '../../cloudprovider/azure/decisions/nodeclass-validation.js';
import { desiredNodeClassStatus } from '../../cloudprovider/azure/decisions/nodeclass-status.js';
import { rememberPreemption } from '../../cloudprovider/azure/decisions/failure-memory.js';
import { lifecycleAnswers } from '../../cloudprovider/lifecycle-answers.js';

export const leaks = [vmNameFor, vmOwnership, nodeClassProblems, desiredNodeClassStatus, rememberPreemption, lifecycleAnswers];
`;

describe('the lifecycle imports nothing Azure', () => {
  test('a lifecycle file importing the Azure SDK, an ARM adapter or the Azure provider fails', async () => {
    const messages = await restrictedImports(importingAzure, 'shared/lifecycle/launch/fixture-azure.ts');
    expect(messages).toHaveLength(4);
    expect(messages.every((m) => /imports nothing Azure|only its seam/.test(m))).toBe(true);
  });

  test("a lifecycle file importing Azure's decisions or the provider's answers fails", async () => {
    const path = 'shared/lifecycle/termination/fixture-azure-decisions.ts';
    // Every one of the six imports is reported (one under cloudprovider/azure/ matches two patterns).
    expect(await restrictedLines(importingAzureDecisions, path)).toEqual([2, 3, 4, 5, 6, 7]);
    const messages = await restrictedImports(importingAzureDecisions, path);
    expect(messages.every((m) => /imports nothing Azure|only its seam/.test(m))).toBe(true);
  });

  test('a lifecycle file importing only the seam passes', async () => {
    expect(await restrictedImports(clean, 'shared/lifecycle/launch/fixture-clean.ts')).toEqual([]);
  });

  test('outside the lifecycle the same imports are allowed', async () => {
    expect(await restrictedImports(importingAzure, 'shared/cloudprovider/fixture-azure.ts')).toEqual([]);
  });
});
