/**
 * The hosted pages rendered on the server: a page component to static HTML (react-dom/server; no
 * hydration, no script of React's), with its doctype. Identity renders the provider's pages with
 * it; the console never imports this entry (its pages render in the browser).
 */
import { type ComponentType, createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';

export function renderPage<P extends object>(Page: ComponentType<P>, props: P): string {
  return `<!doctype html>\n${renderToStaticMarkup(createElement(Page, props))}`;
}

export { SIGNIN_SCRIPT } from './signin-script';
