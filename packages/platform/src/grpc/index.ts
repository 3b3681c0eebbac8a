export * from './client';
export * from './server';
export { ACTOR_KEY, splitPath, type RequestOf, type ResponseOf, type ServiceDef } from './types';
export * from './tls';
export * from './access';
