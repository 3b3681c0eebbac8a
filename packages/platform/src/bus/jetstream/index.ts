export { JetStreamEventBus, type JetStreamBusOptions } from './bus';
