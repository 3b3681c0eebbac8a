/**
 * GraphiQL's fetcher: one POST to the edge GraphQL endpoint (same origin), with the headers typed
 * into GraphiQL's headers editor. No subscriptions (the edge schema has none), so no websocket
 * client is bundled (@graphiql/toolkit's createGraphiQLFetcher would pull graphql-ws in).
 */
import type { GraphiQLProps } from 'graphiql';

type Fetcher = GraphiQLProps['fetcher'];

export const GRAPHQL_PATH = '/api/v1/graphql';

export const fetcher: Fetcher = async (params, opts) => {
  const res = await fetch(GRAPHQL_PATH, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...(opts?.headers as Record<string, string> | undefined) },
    body: JSON.stringify(params),
  });
  // A GraphQL response (even a 400 refusal) or a problem+json: shown in the response pane as is.
  return res.json();
};
