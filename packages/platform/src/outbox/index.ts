/**
 * Transactional outbox. A use case writes its events with `appendEvents(manager, …)` inside the
 * same transaction as its state change; the relay publishes them to the event bus afterwards
 * (woken by NOTIFY and by the bus's reconnect, polling as a fallback), so an event is never lost
 * when the bus is down and never published for a change that rolled back.
 */
export { OutboxEventRow } from './entity';
export { CreateOutbox1763800000000, OutboxHeaders1764200000200, OutboxLease1764900000000 } from './migrations';
export { OUTBOX_CHANNEL, type NewEvent, appendEvents, event } from './append';
export { type InTransaction, type UnitOfWork, outboxUnitOfWork } from './unit-of-work';
export { type OutboxBacklog, OutboxRelay, type OutboxRelayOptions } from './relay';
