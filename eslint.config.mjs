// ESLint for the extension's TypeScript (src/): the recommended rules of ESLint and of
// typescript-eslint. Formatting is Prettier's (`jlpm prettier:check`), not ESLint's.
// Run by `jlpm lint:check`, `./run.sh --test` and .pre-commit-config.yaml.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['lib/', 'node_modules/', 'olympus_jupyter/', '**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['src/**/*.ts'],
    rules: {
      // An argument kept for a signature's shape is named with a leading underscore.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }
      ]
    }
  }
);
