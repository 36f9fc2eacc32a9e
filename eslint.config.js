// ESLint flat config. The workflow wall: files under src/workflows may import only the Temporal
// workflow API, pure libraries, src/domain and activity *types*, so workflow code stays deterministic.
import tseslint from 'typescript-eslint';

const workflowAllowed = ['@temporalio/workflow', '@temporalio/common', 'zod'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'payload/**', '.venv/**', '.run/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test's describe/it return promises the runner itself awaits.
        {
          allowForKnownSafeCalls: [
            { from: 'package', name: ['describe', 'it', 'test'], package: 'node:test' },
          ],
        },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // The layers below the activities know nothing of Temporal: they throw domain errors
    // (src/errors), which the activity boundary maps onto Temporal failures once.
    files: [
      'src/backends/**/*.ts',
      'src/registry/**/*.ts',
      'src/errors/**/*.ts',
      'src/domain/**/*.ts',
      'src/provenance/**/*.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@temporalio/*'],
              message:
                'Below src/activities nothing imports Temporal: throw permanent()/transient() from src/errors/domain-error.ts.',
            },
            {
              regex: '^(\\.\\./)+activities/',
              message: 'Below src/activities nothing imports the activities.',
            },
          ],
        },
      ],
    },
  },
  {
    // The domain is pure (schemas, names, paths, argv, verdicts): workflows import it, so no I/O.
    // Spec files are read by the CLI (src/cli/spec-files).
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'yaml', '@kubernetes/*'],
              message: 'src/domain holds pure code only: I/O lives in activities, backends and the CLI.',
            },
            {
              group: ['@temporalio/*'],
              message:
                'Below src/activities nothing imports Temporal: throw permanent()/transient() from src/errors/domain-error.ts.',
            },
            {
              regex: '^(\\.\\./)+activities/',
              message: 'Below src/activities nothing imports the activities.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              // Everything that is neither an allowed package nor a relative import into workflows/ or domain/.
              regex: `^(?!(${workflowAllowed.map((p) => p.replace('/', '\\/')).join('|')})$)(?!\\.\\/)(?!\\.\\.\\/domain\\/)(?!\\.\\.\\/activities\\/)`,
              message:
                'Workflow files may import only @temporalio/workflow, pure libraries, src/domain and activity types.',
            },
            {
              regex: '^\\.\\.\\/activities\\/',
              allowTypeImports: true,
              message: 'Workflows may import activity *types* only (import type).',
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        {
          name: 'Date',
          message: 'Use workflow time (Date is replaced, but be explicit): workflowInfo / sleep.',
        },
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'process', message: 'No environment in workflow code.' },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: 'Use the workflow API for randomness.' },
      ],
    },
  },
);
