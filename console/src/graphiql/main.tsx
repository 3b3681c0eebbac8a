/**
 * GraphiQL for the edge GraphQL API (GRAPHQL_IDE=true), bundled by the console's Vite build as a
 * second entry (graphiql.html) and served by the gateway at /graphiql: nothing is loaded from
 * another origin. Monaco's editor workers are bundled too (graphiql/setup-workers/vite). Headers
 * (a bearer token) are typed into the headers editor and not persisted (GraphiQL's default).
 * `?query=` opens with that document.
 */
import 'graphiql/setup-workers/vite';
import 'graphiql/style.css';
import './graphiql.css';
import { GraphiQL } from 'graphiql';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { fetcher } from './fetcher';

const initialQuery = new URLSearchParams(window.location.search).get('query') ?? undefined;

createRoot(document.getElementById('graphiql')!).render(
  <StrictMode>
    <GraphiQL fetcher={fetcher} initialQuery={initialQuery} defaultEditorToolsVisibility="headers" />
  </StrictMode>,
);
