export * from './port';
export { InMemoryEventBus } from './memory';
export { JetStreamEventBus, type JetStreamBusOptions } from './jetstream';
export * from './invalidated-cache';
