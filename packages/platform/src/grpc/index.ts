export * from './client';
export * from './server';
export { splitPath, type RequestOf, type ResponseOf, type ServiceDef } from './types';
export * from './assertion';
export * from './tls';
export * from './access';
export { IN_PROCESS_SCHEME, isInProcessTarget } from './in-process';
