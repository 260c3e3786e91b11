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
    // The azd hooks are plain Node scripts.
    files: ['infra/hooks/**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
