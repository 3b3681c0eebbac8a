import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ProblemError } from './api/problem';
import { App } from './App';
import '@iam/hosted-pages/styles.css';
import './styles.css';

const client = new QueryClient({
  defaultOptions: {
    // A problem (4xx) is an answer, not a glitch: retry only network failures and 5xx, once.
    queries: { retry: (n, e) => n < 1 && !(e instanceof ProblemError && e.status < 500), staleTime: 5_000 },
  },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={client}><App /></QueryClientProvider>
  </StrictMode>,
);
