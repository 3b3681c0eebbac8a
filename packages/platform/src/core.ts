/**
 * `@iam/platform/core`: what every process needs and nothing that loads a database driver or
 * TypeORM: config, errors, logs, tracing, metrics, health, lifecycle, tokens, crypto.
 * The other entry points: `/grpc`, `/bus`, `/db`, `/outbox`; `@iam/platform` is all of them
 * plus the service runtime.
 */
export * from './config';
export * from './errors';
export * from './health';
export * from './lifecycle';
export * from './logger';
export * from './metrics';
export * from './ops-server';
export * from './trace';
export * from './tracing';
export * from './tracing-config';
export * from './runtime';
export * from './jwt';
export * from './crypto';
export * from './base32';
export * from './batch-loop';
export * from './request-context';
export * from './password-policy';
export * from './retry';
export * from './text';
export * from './import-records';
