/**
 * Schemas of the edge profile's HTTP routes (DESIGN §2 "Edge BFF"): the products, /healthz, and
 * the GraphQL endpoint's envelope (the GraphQL schema itself is routes/edge/graphql/schema.ts).
 * Responses carry only the fields listed here.
 */
import { Type } from '@sinclair/typebox';
import { PAGE_SIZE_MAX, Problem, Uuid } from './common';

export const Product = Type.Object(
  {
    id: Uuid,
    sku: Type.String(),
    name: Type.String(),
    description: Type.String(),
    priceMinor: Type.Integer({ description: 'Price in minor units of currency (cents for EUR and USD)' }),
    currency: Type.String({ description: 'ISO 4217 code' }),
    status: Type.Union([Type.Literal('ACTIVE'), Type.Literal('ARCHIVED')]),
    available: Type.Integer({ description: 'Units a checkout may still take' }),
  },
  { additionalProperties: false },
);

export const ProductPage = Type.Object(
  {
    products: Type.Array(Product),
    nextPageToken: Type.Union([Type.String(), Type.Null()], { description: 'Pass as page_token for the next page; null on the last page' }),
  },
  { additionalProperties: false },
);

export const OneProduct = Type.Object({ product: Product }, { additionalProperties: false });

export const PRODUCTS_PAGE_SIZE_DEFAULT = 20;

export const ProductsQuery = Type.Object({
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_SIZE_MAX, default: PRODUCTS_PAGE_SIZE_DEFAULT })),
  page_token: Type.Optional(Type.String({ maxLength: 200, description: 'nextPageToken of the previous page (opaque)' })),
  status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('archived')], { description: 'Absent: every status' })),
  q: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive substring of the sku, name or description' })),
}, { additionalProperties: false });

export const Healthz = Type.Object({ status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]) }, { additionalProperties: false });

// --- GraphQL over HTTP ----------------------------------------------------------------------

const Variables = Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]);

export const GraphQLBody = Type.Object(
  {
    query: Type.String({ description: 'The GraphQL document' }),
    operationName: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    variables: Type.Optional(Variables),
    extensions: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);

export const GraphQLQueryString = Type.Object({
  query: Type.String({ description: 'The GraphQL document (queries only; mutations need POST)' }),
  operationName: Type.Optional(Type.String()),
  variables: Type.Optional(Type.String({ description: 'JSON' })),
  extensions: Type.Optional(Type.String({ description: 'JSON' })),
});

const GraphQLError = Type.Object(
  {
    message: Type.String(),
    locations: Type.Optional(Type.Array(Type.Object({ line: Type.Integer(), column: Type.Integer() }, { additionalProperties: false }))),
    path: Type.Optional(Type.Array(Type.Union([Type.String(), Type.Integer()]))),
    extensions: Type.Object(
      {
        code: Type.String({ description: 'UNAUTHENTICATED, FORBIDDEN, BAD_USER_INPUT, NOT_FOUND, INSUFFICIENT_STOCK, PRODUCT_UNAVAILABLE, IDEMPOTENCY_CONFLICT, UPSTREAM_UNAVAILABLE (INTERNAL_SERVER_ERROR for a fault of ours)' }),
        errors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }, { additionalProperties: false }), { description: 'The offending inputs' })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const GraphQLResponse = Type.Object(
  {
    data: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], { description: 'Absent when the document was refused before execution' })),
    errors: Type.Optional(Type.Array(GraphQLError)),
  },
  { additionalProperties: false },
);

/** A refused document answers a GraphQL response, a refused HTTP request a problem: both can be 400. */
export const GraphQLBadRequest = {
  description: 'The document is not valid or exceeds a limit (a GraphQL response), or the HTTP request is not (a problem)',
  content: { 'application/json': { schema: GraphQLResponse }, 'application/problem+json': { schema: Problem } },
};
