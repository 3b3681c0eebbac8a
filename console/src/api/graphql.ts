/**
 * The edge GraphQL endpoint (product administration lives there, not in the REST profiles). An
 * `errors[]` entry becomes the same ProblemError the REST calls throw: its `extensions.code` gives
 * the status and title, `extensions.errors` the field errors, the `x-trace-id` header the trace id.
 */
import { refreshNow, session } from '../auth/session';
import { type Problem, ProblemError } from './problem';

const BY_CODE: Record<string, { status: number; title: string }> = {
  BAD_USER_INPUT: { status: 400, title: 'The input is not valid' },
  UNAUTHENTICATED: { status: 401, title: 'Not signed in' },
  FORBIDDEN: { status: 403, title: 'Forbidden' },
  NOT_FOUND: { status: 404, title: 'Not found' },
  INSUFFICIENT_STOCK: { status: 409, title: 'Not enough stock' },
  PRODUCT_UNAVAILABLE: { status: 409, title: 'The product is not for sale' },
  IDEMPOTENCY_CONFLICT: { status: 409, title: 'Conflict' },
  UPSTREAM_UNAVAILABLE: { status: 503, title: 'Service unavailable' },
};

interface GraphQLError {
  message: string;
  extensions?: { code?: string; errors?: { field: string; message: string }[] };
}

function post(query: string, variables: Record<string, unknown>): Promise<Response> {
  const s = session();
  return fetch('/api/v1/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(s ? { authorization: `Bearer ${s.token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
}

export async function gql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  let r = await post(query, variables);
  let body = (await r.json().catch(() => ({}))) as { data?: T; errors?: GraphQLError[] } & Partial<Problem>;
  if (session() && (r.status === 401 || body.errors?.[0]?.extensions?.code === 'UNAUTHENTICATED') && (await refreshNow())) {
    r = await post(query, variables);
    body = (await r.json().catch(() => ({}))) as typeof body;
  }
  const traceId = r.headers.get('x-trace-id') ?? undefined;
  const first = body.errors?.[0];
  if (first) {
    const kind = BY_CODE[first.extensions?.code ?? ''] ?? { status: r.status >= 400 ? r.status : 500, title: 'Request failed' };
    throw new ProblemError({ type: 'about:blank', ...kind, detail: first.message, traceId, errors: first.extensions?.errors });
  }
  if (!r.ok) throw new ProblemError({ type: 'about:blank', title: body.title ?? 'Request failed', status: r.status, detail: body.detail, traceId: body.traceId ?? traceId });
  return body.data as T;
}
