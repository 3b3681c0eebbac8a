#!/usr/bin/env node
// Writes the README's webhook event catalog from the one source (packages/contracts/src/webhooks,
// built): `make webhooks-docs`. With --check, writes nothing and exits 1 when the README is stale
// (`make webhooks-docs-check`, in CI).
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { webhookCatalog } = createRequire(import.meta.url)(join(root, 'packages/contracts/dist/index.js'));
const file = join(root, 'README.md');
const readme = readFileSync(file, 'utf8');
const next = webhookCatalog.withCatalog(readme);
if (process.argv.includes('--check')) {
  if (next !== readme) {
    console.error("README.md's webhook event catalog is stale: run 'make webhooks-docs' and commit");
    process.exit(1);
  }
} else if (next !== readme) {
  writeFileSync(file, next);
  console.log('README.md: webhook event catalog written');
}
