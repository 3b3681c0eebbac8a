// ESLint (flat config). The rules live with the linter's own install in tools/lint (`make lint`).
export { default } from './tools/lint/config.mjs';
