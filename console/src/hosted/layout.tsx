/** Mounts a hosted page (its components, stylesheet and strings: @iam/hosted-pages) in #root. */
import { type ReactNode, StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import '@iam/hosted-pages/styles.css';

export function mount(page: ReactNode): void {
  createRoot(document.getElementById('root')!).render(<StrictMode>{page}</StrictMode>);
}
