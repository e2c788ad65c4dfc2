// ESLint 9 flat config: bugs, not style. TypeScript itself checks types and undefined names.
import js from '@eslint/js';
import vitest from '@vitest/eslint-plugin';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/** The Node globals the three plain-JavaScript files use (the .ts files are checked by tsc). */
const nodeGlobals = Object.fromEntries(
  ['process', 'console', 'Buffer', 'URL', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'require', 'module', '__dirname'].map((name) => [name, 'readonly']),
);

export default defineConfig(
  // wasm/ is AssemblyScript (scripts/wasm.mjs compiles it), not TypeScript for Node.
  { ignores: ['dist/**', 'coverage/**', '.serverless/**', 'tmp/**', 'wasm/**'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      // `_name` marks what is left unused on purpose (a destructured-away field, a fixed callback slot).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { globals: nodeGlobals },
  },
  {
    // What scripts/build.mjs builds a lazily loaded package from (chunks/undici.cjs): undici's parts, by file.
    files: ['scripts/lazy/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['bench/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['test/**'],
    plugins: { vitest },
    rules: {
      ...vitest.configs.recommended.rules,
      // Vitest's expect takes a message as its second argument.
      'vitest/valid-expect': ['error', { maxArgs: 2 }],
      // Table helpers in test/support take their tests' title as an argument.
      'vitest/valid-title': ['error', { allowArguments: true }],
      'vitest/expect-expect': ['error', { assertFunctionNames: ['expect', 'expect*', 'assert*'] }],
      // Hooks run inside each test: an expectation there (no secret in the logs) fails that test.
      'vitest/no-standalone-expect': ['error', { additionalTestBlockFunctions: ['beforeAll', 'beforeEach', 'afterEach', 'afterAll'] }],
      // Parsed JSON in test helpers; the code under test is held to the rule.
      '@typescript-eslint/no-explicit-any': 'off',
      // A test asserts real behaviour and can fail: no expectation that only runs on some paths.
      'vitest/no-conditional-expect': 'error',
      'vitest/no-conditional-in-test': 'error',
    },
  },
);
