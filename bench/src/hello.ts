// Baseline: a bare Fastify hello-world, the ceiling of any HTTP route on this machine.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
void app.listen({ host: '127.0.0.1', port: Number(process.argv[2] ?? 18090) }).then(() => process.send?.('ready'));
