// One jest run for the whole monorepo. TypeScript is compiled by @swc/jest (ts-jest does not
// support TypeScript 7); type-checking is `tsc` (make typecheck). Workspace packages resolve to
// their sources, so tests need no build.
/** @type {import('jest').Config} */
const swc = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
    target: 'es2022',
  },
  // Dynamic import() stays native, so ESM-only packages loaded lazily (embedded-postgres) load as ESM.
  module: { type: 'commonjs', ignoreDynamic: true },
  sourceMaps: 'inline',
};
/** TSX (the hosted pages' components): the same, with JSX through React's automatic runtime. */
const swcTsx = { ...swc, jsc: { ...swc.jsc, parser: { ...swc.jsc.parser, tsx: true }, transform: { ...swc.jsc.transform, react: { runtime: 'automatic' } } } };

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/services', '<rootDir>/gateway', '<rootDir>/deploy', '<rootDir>/helm', '<rootDir>/console'],
  testMatch: ['**/src/**/*.test.ts', '**/src/**/*.test.tsx', '**/test/**/*.test.ts'],
  // The fault suite is its own project (deploy/all-in-one/test/faults/jest.config.js: make faults).
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '/deploy/all-in-one/test/faults/'],
  transform: { '^.+\\.(t|j|mj)s$': ['@swc/jest', swc], '^.+\\.tsx$': ['@swc/jest', swcTsx] },
  // ESM-only dependencies are compiled to CommonJS for jest.
  transformIgnorePatterns: ['/node_modules/(?!(jose|cookie|content-disposition)/)'],
  moduleNameMapper: {
    '^@iam/(platform|contracts)$': '<rootDir>/packages/$1/src',
    '^@iam/platform/(testing|core|grpc|bus|db|outbox|embedded-postgres)$': '<rootDir>/packages/platform/src/$1',
    '^@iam/identity-client$': '<rootDir>/packages/identity-client/src',
    '^@iam/hosted-pages$': '<rootDir>/packages/hosted-pages/src',
    '^@iam/hosted-pages/server$': '<rootDir>/packages/hosted-pages/src/server',
    '^@iam/hosted-pages/browser$': '<rootDir>/packages/hosted-pages/src/browser',
    '^@iam/hosted-pages/styles.css$': '<rootDir>/packages/hosted-pages/styles.css',
    '^@iam/(identity|directory|notification|commerce|audit)$': '<rootDir>/services/$1/src',
    '^@iam/gateway$': '<rootDir>/gateway/src',
  },
  globalSetup: '<rootDir>/packages/platform/src/testing/jest-global-setup.ts',
  globalTeardown: '<rootDir>/packages/platform/src/testing/jest-global-teardown.ts',
  testTimeout: 30_000,
  maxWorkers: 2,
};
