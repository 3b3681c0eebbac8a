// The project's ESLint rules (type-aware typescript-eslint), loaded by ../../eslint.config.mjs.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Per workspace, the @iam/* packages it does not declare (dependencies, devDependencies or peers),
 * so a test cannot reach a service its package does not name (issue #21: no back-edges).
 */
function workspaceBoundaries() {
  const manifest = (dir) => JSON.parse(readFileSync(`${root}/${dir}/package.json`, 'utf8'));
  const workspaces = manifest('.').workspaces.map((dir) => ({ dir, pkg: manifest(dir) }));
  const ours = workspaces.map((w) => w.pkg.name);
  return workspaces.map(({ dir, pkg }) => {
    const declared = new Set([pkg.name, ...Object.keys({ ...pkg.dependencies, ...pkg.devDependencies, ...pkg.peerDependencies })]);
    const undeclared = ours.filter((name) => !declared.has(name));
    const message = `${pkg.name} does not declare it in ${dir}/package.json: a workspace imports only the packages it names (no back-edges; a test that needs several services lives in deploy/all-in-one/test).`;
    return { files: [`${dir}/**/*.ts`, `${dir}/**/*.tsx`], rules: { 'no-restricted-imports': ['error', { patterns: [{ group: undeclared.flatMap((n) => [n, `${n}/*`]), message }] }] } };
  });
}

/** `req.body as {…}`, `(request.params as {…}).id`, `<T>req.query`, `req.body.x as T`: casts of request data. */
function requestDataCasts() {
  const data = "[object.name=/^(req|request)$/][property.name=/^(body|query|params|headers)$/]";
  const message =
    'Do not cast request data: declare its schema on the route (body, querystring, params) and let the type provider type it (FastifyPluginAsyncTypebox, gateway/README.md).';
  return ['TSAsExpression', 'TSTypeAssertion'].flatMap((cast) => [
    { selector: `${cast} > MemberExpression.expression${data}`, message },
    { selector: `${cast} > MemberExpression.expression > MemberExpression.object${data}`, message },
  ]);
}

/** The hosted pages the console mounts: typed against the DOM by their package's and the console's configs. */
const BROWSER_PAGES = ['packages/hosted-pages/src/browser/**'];

/** Generated code (protobuf, OpenAPI types, Unicode tables, limits): never edited, never linted. */
const generated = ['**/*.d.ts', '**/*.generated.ts'];

export default tseslint.config(
  {
    ignores: ['**/node_modules/**', '**/dist/**', 'packages/contracts/src/gen/**', '.data/**', '.ci/**', 'tools/**', 'protos/**', '**/*.js', '**/*.mjs', '**/*.cjs', ...generated],
  },
  // The console (React, its own tsconfig and Vite build) and the hosted pages it mounts
  // (packages/hosted-pages/src/browser, typed against the DOM) get only the size and style rules
  // below; the type-aware rules read the root tsconfig.test.json, which does not include them.
  ...[js.configs.recommended, ...tseslint.configs.recommendedTypeChecked].map((config) => ({ ...config, ignores: [...(config.ignores ?? []), 'console/**', ...BROWSER_PAGES] })),
  {
    files: ['console/**/*.ts', 'console/**/*.tsx', ...BROWSER_PAGES],
    languageOptions: { parser: tseslint.parser },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  {
    // No inline styles (issue #37 item 5): a theme is packages/hosted-pages/styles.css and the
    // console's styles.css, and the pages' CSP allows no inline style.
    files: ['console/src/**/*.tsx', 'packages/hosted-pages/src/**/*.tsx'],
    rules: { 'no-restricted-syntax': ['error', { selector: "JSXAttribute[name.name='style']", message: 'No inline styles: give the element a class in the stylesheet (packages/hosted-pages/styles.css or console/src/styles.css).' }] },
  },
  {
    // No hand-written file over 400 lines (STYLE.md, issue #37): every line counts, blank and
    // comment lines too, so the number is the one `wc -l` shows. Generated files are ignored above.
    files: ['**/*.ts', '**/*.tsx'],
    rules: { 'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }] },
  },
  {
    ignores: ['console/**', ...BROWSER_PAGES],
    languageOptions: {
      parserOptions: { project: ['./tsconfig.test.json'], tsconfigRootDir: root },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Every suppression says why (STYLE.md): `-- reason` after the rule name.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-console': 'error',
      // Async is the contract of our ports and of Fastify handlers, awaited or not.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Request data is typed by the schema that validates it (@fastify/type-provider-typebox): a
    // cast would say what the validator never checked (STYLE.md, Contracts).
    files: ['gateway/src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-syntax': ['error', ...requestDataCasts()],
    },
  },
  ...workspaceBoundaries(),
  {
    // Tests read loosely typed bodies and mocks.
    files: ['**/*.test.ts', '**/test/**/*.ts', '**/testing/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-console': 'off',
    },
  },
);
