export * from './core';
export * from './service';
export * from './bus';
export * from './grpc';
export * from './db';
export * from './outbox';
export * from './unicode';
