/**
 * The gateway has no database: it loads the platform through its `core`, `grpc` and `bus` entry
 * points, so neither TypeORM nor reflect-metadata (nor pg) is ever loaded by it.
 */
jest.mock('typeorm', () => {
  throw new Error('the gateway loaded TypeORM');
});
jest.mock('reflect-metadata', () => {
  throw new Error('the gateway loaded reflect-metadata');
});
jest.mock('pg', () => {
  throw new Error('the gateway loaded pg');
});

it('loads its app and runtime without TypeORM, reflect-metadata or pg', () => {
  jest.isolateModules(() => {
    expect(() => require('./gateway')).not.toThrow(); // eslint-disable-line @typescript-eslint/no-require-imports -- loading the module graph is the test
  });
});
