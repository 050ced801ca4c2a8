// Shared lint rules: typescript-eslint's recommended set plus the few habits of STYLE.md a linter can hold.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/coverage/**', '**/.turbo/**', 'apps/web/dist/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['warn', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      'no-console': ['error', { allow: ['warn', 'error'] }],
    },
  },
  {
    files: ['**/test/**', '**/*.test.ts', 'tooling/**', 'sdk/create-adapter/**', 'apps/cli/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // Tests read untyped JSON answers; `any` there is honest about it.
    files: ['**/test/**', '**/*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
