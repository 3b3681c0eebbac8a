// Baseline: the bare pipeline of a read by id, in one process as in the all-in-one system: a
// Fastify route calls a grpc-js unary method (the directory's own GetUser contract, protobuf on
// the wire) whose handler runs one primary-key SELECT through `pg`. No validation, logging, auth,
// metrics or tracing: the floor our own layers are measured against (issue #12).
//   node bare.js <port> <database url>   → GET /users/<id>
import { Server, ServerCredentials, type ServiceError, credentials, makeGenericClientConstructor, status } from '@grpc/grpc-js';
import { directoryV1 } from '@iam/contracts';
import Fastify from 'fastify';
import { Pool } from 'pg';

interface Row {
  id: string;
  first_name: string;
  last_name: string;
  email: string;
  phone: string | null;
  email_verified: boolean;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

async function main(): Promise<void> {
  const [port = '18091', url = 'postgres://postgres@127.0.0.1:5432/bench_directory'] = process.argv.slice(2);
  const pool = new Pool({ connectionString: url, max: 10 });

  const server = new Server();
  server.addService(directoryV1.UserServiceService, {
    getUser: (call: { request: directoryV1.ById }, cb: (err: Partial<ServiceError> | null, res?: directoryV1.User) => void) => {
      pool
        .query<Row>('SELECT id, first_name, last_name, email, phone, email_verified, created_at, updated_at, deleted_at FROM users WHERE id = $1', [call.request.id])
        .then(({ rows: [r] }) => {
          if (!r) return cb({ code: status.NOT_FOUND, details: 'not found' });
          cb(null, {
            id: r.id,
            firstName: r.first_name,
            lastName: r.last_name,
            email: r.email,
            phone: r.phone === null ? undefined : Number(r.phone),
            emailVerified: r.email_verified,
            roles: [],
            createdAt: r.created_at,
            updatedAt: r.updated_at,
            deletedAt: r.deleted_at ?? undefined,
          });
        }, (err: Error) => cb({ code: status.INTERNAL, details: err.message }));
    },
  });
  const grpcPort = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const Client = makeGenericClientConstructor(directoryV1.UserServiceService, 'UserService');
  const client = new Client(`127.0.0.1:${grpcPort}`, credentials.createInsecure()) as unknown as {
    getUser(req: directoryV1.ById, cb: (err: ServiceError | null, res: directoryV1.User) => void): void;
  };

  const app = Fastify({ logger: false });
  app.get('/users/:id', (req, reply) => {
    client.getUser({ id: (req.params as { id: string }).id }, (err, user) => {
      if (err) void reply.code(err.code === status.NOT_FOUND ? 404 : 500).send({ error: err.details });
      else void reply.send(user);
    });
  });
  await app.listen({ host: '127.0.0.1', port: Number(port) });
  process.send?.('ready');
}

void main();
