import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'results/**', 'coverage/**', '.package/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    // The lifecycle reaches the cloud only through the cloud provider's seam (shared/cloudprovider/types.ts),
    // as Karpenter's core does through cloudprovider.CloudProvider: nothing Azure (the SDK, the ARM
    // adapters, the Azure provider's own files) is imported under shared/lifecycle/. dependencies.ts is the
    // one exception: it is where the Azure provider is built and handed to the lifecycle.
    files: ['shared/lifecycle/**/*.ts'],
    ignores: ['shared/lifecycle/dependencies.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^@azure/',
              message:
                'The lifecycle imports nothing Azure: ask the cloud provider (cloudprovider/types.ts).',
            },
            {
              regex: '(^|/)azure/',
              message:
                'The lifecycle imports nothing Azure: ask the cloud provider (cloudprovider/types.ts).',
            },
            {
              regex: '(^|/)cloudprovider/(?!types\\.js$)',
              message: 'Of the cloud provider the lifecycle imports only its seam, cloudprovider/types.ts.',
            },
          ],
        },
      ],
    },
  },
  {
    // NodeClaims are written by one module, the lifecycle's NodeClaim writer (guarded merge patches of just
    // what changed, re-applied on a conflict, metadata and status in a stated order), as Karpenter's
    // lifecycle controller writes a NodeClaim once per reconcile: a phase says what the NodeClaim's new
    // state is and calls it. A write method called on the NodeClaims client anywhere else in the lifecycle,
    // or in the cloud provider (which writes no Kubernetes object), fails. Creates and deletes are not
    // writes of a NodeClaim's state and stay with their phases.
    files: ['shared/lifecycle/**/*.ts', 'shared/cloudprovider/**/*.ts'],
    ignores: ['shared/lifecycle/nodeclaims/nodeclaim-writes.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...[
          "CallExpression[callee.object.property.name='nodeClaims'][callee.property.name=/^(mergePatch|mergePatchStatus|jsonPatch|patch|update|replace)$/]",
          "CallExpression[callee.object.name='nodeClaims'][callee.property.name=/^(mergePatch|mergePatchStatus|jsonPatch|patch|update|replace)$/]",
        ].map((selector) => ({
          selector,
          message:
            'NodeClaims are written only by writeNodeClaim (shared/lifecycle/nodeclaims/nodeclaim-writes.ts): return the new state from its update function.',
        })),
      ],
    },
  },
  {
    // The azd hooks are plain Node scripts.
    files: ['infra/hooks/**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  {
    // The CLI's shims (bin/) are plain Node scripts too.
    files: ['bin/**/*.mjs'],
    languageOptions: { globals: { URL: 'readonly' } },
  },
);
