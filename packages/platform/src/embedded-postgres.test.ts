import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from './embedded-postgres';

const asRoot = process.getuid?.() === 0;

describe('embedded PostgreSQL', () => {
  // As root the server runs as the postgres OS user; a 0700 directory on the way is refused with a
  // sentence naming it, before initdb fails with EACCES.
  (asRoot ? it : it.skip)('as root, a data directory the postgres OS user cannot enter is refused plainly', async () => {
    const closed = mkdtempSync(join(tmpdir(), 'iam-closed-')); // mode 0700
    try {
      await expect(startEmbeddedPostgres({ dir: join(closed, 'pg'), port: 15_999, ephemeral: true })).rejects.toThrow(
        new RegExp(`cannot enter ${closed} \\(mode 700\\).*chmod o\\+x`),
      );
    } finally {
      rmSync(closed, { recursive: true, force: true });
    }
  });
});
