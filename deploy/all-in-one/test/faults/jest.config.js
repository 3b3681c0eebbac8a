// The fault suite (issue #14): its own jest project, run by `make faults` and `.ci/run` (not by
// `make test`: its outages take minutes). Each test starts its own processes and servers.
const base = require('../../../../jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  rootDir: '../../../..',
  roots: ['<rootDir>/deploy/all-in-one/test/faults'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  testTimeout: 300_000,
  // Two cores: the tests' own outages and timings need the machine to themselves.
  maxWorkers: 1,
};
