/**
 * The edge's one mapping of errors (./errors.ts): a commerce refusal is told apart by its
 * namespaced reason (AppError.reason), carried over gRPC in metadata, never by a field error;
 * everything else by its code.
 */
import { commerceV1 } from '@iam/contracts';
import { ANY_CALLER, AppError, GrpcHealth, type GrpcServerHandle, bindService, createGrpcClient, startGrpcServer } from '@iam/platform';
import { testLogger, testMetrics } from '@iam/platform/testing';
import { edgeErrorOf, restErrorOf } from './errors';

const refusal = (reason: 'commerce.insufficient_stock' | 'commerce.product_unavailable' | 'commerce.idempotency_conflict', errors = [{ field: 'lines[0].quantity', message: 'exceeds what is available' }]) =>
  new AppError('CONFLICT', 'Refused.', { reason, errors });

describe('edge error mapping', () => {
  it('each commerce reason is its public GraphQL code, with the field errors as they are', () => {
    expect(edgeErrorOf(refusal('commerce.insufficient_stock'))).toEqual({
      code: 'INSUFFICIENT_STOCK',
      message: 'Refused.',
      fields: [{ field: 'lines[0].quantity', message: 'exceeds what is available' }],
    });
    expect(edgeErrorOf(refusal('commerce.product_unavailable'))?.code).toBe('PRODUCT_UNAVAILABLE');
    expect(edgeErrorOf(refusal('commerce.idempotency_conflict'))?.code).toBe('IDEMPOTENCY_CONFLICT');
  });

  it('without a reason the code decides: a CONFLICT (a taken sku) is BAD_USER_INPUT, and a field named "reason" is only a field', () => {
    expect(edgeErrorOf(AppError.conflict('Taken.', [{ field: 'sku', message: 'is taken' }]))).toEqual({ code: 'BAD_USER_INPUT', message: 'Taken.', fields: [{ field: 'sku', message: 'is taken' }] });
    expect(edgeErrorOf(AppError.conflict('Old style.', [{ field: 'reason', message: 'INSUFFICIENT_STOCK' }]))?.code).toBe('BAD_USER_INPUT');
    // A reason no storefront tells apart leaves as its code does.
    expect(edgeErrorOf(new AppError('CONFLICT', 'Other.', { reason: 'commerce.something_else' }))?.code).toBe('BAD_USER_INPUT');
    expect(edgeErrorOf(AppError.unavailable())).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', message: 'The commerce service is unavailable; try again shortly.' });
    expect(edgeErrorOf(new AppError('INTERNAL', 'x'))).toBeNull();
    expect(edgeErrorOf(new Error('boom'))).toBeNull();
  });

  it("a REST route's field names are its own spelling; the reason stays", () => {
    const err = restErrorOf(refusal('commerce.insufficient_stock', [{ field: 'pageToken', message: 'is not valid' }]), { pageToken: 'querystring.page_token' });
    expect(err).toMatchObject({ code: 'CONFLICT', reason: 'commerce.insufficient_stock', errors: [{ field: 'querystring.page_token', message: 'is not valid' }] });
  });

  describe('over gRPC (an in-process OrderService on port 0)', () => {
    const logger = testLogger();
    const metrics = testMetrics();
    let server: GrpcServerHandle;

    beforeAll(async () => {
      server = await startGrpcServer({
        host: '127.0.0.1',
        port: 0,
        logger,
        health: new GrpcHealth(),
        bindings: [
          bindService(
            commerceV1.OrderServiceService,
            {
              checkout: async () => {
                throw refusal('commerce.insufficient_stock');
              },
            },
            { logger, metrics, service: 'commerce', callKey: undefined },
            ANY_CALLER,
          ),
        ],
      });
    });

    afterAll(async () => {
      await server.shutdown(1_000);
    });

    it('a refusal arrives with its reason and is INSUFFICIENT_STOCK at the edge, its field errors intact', async () => {
      const orders = createGrpcClient(commerceV1.OrderServiceService, { target: `127.0.0.1:${server.port}`, metrics });
      const err = await orders.call.checkout({ customerId: '00000000-0000-4000-8000-000000000001', idempotencyKey: 'k', lines: [], customerEmail: '' }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'CONFLICT', reason: 'commerce.insufficient_stock' });
      expect(edgeErrorOf(err)).toEqual({ code: 'INSUFFICIENT_STOCK', message: 'Refused.', fields: [{ field: 'lines[0].quantity', message: 'exceeds what is available' }] });
      orders.close();
    });
  });
});
