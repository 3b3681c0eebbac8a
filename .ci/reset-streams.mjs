// Removes the system's JetStream streams (events of earlier CI runs) from the shared NATS server,
// so a CI run starts from empty databases and empty streams alike.
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';

const nc = await connect({ servers: process.argv[2] ?? 'nats://127.0.0.1:4222' });
const jsm = await jetstreamManager(nc);
for (const name of ['DIRECTORY', 'IDENTITY', 'COMMERCE', 'DEAD_LETTER']) {
  await jsm.streams.delete(name).catch(() => false);
}
await nc.close();
