/**
 * How the chart's tests render it without a cluster: with a helm binary (HELM_BIN, or `helm` on
 * PATH), or else the Go-template renderer of render/ (Go's text/template and sprig from Debian's
 * packages: golang-go, golang-github-masterminds-sprig-dev, golang-gopkg-yaml.v3-dev). Used by
 * the chart-*.test.ts files and deploy/test/image.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

export function helmBinary(): string | undefined {
  if (process.env.HELM_BIN) return process.env.HELM_BIN;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, 'helm'))) return join(dir, 'helm');
  }
  return undefined;
}

/**
 * Without helm: render/main.go built from Debian's Go packages (render/build.sh), when they are
 * installed. It renders like `helm template` (the subset of flags the tests use); it does not lint.
 */
export function goRenderer(): string | undefined {
  if (!existsSync('/usr/bin/go') || !existsSync('/usr/share/gocode/src/github.com/Masterminds/sprig')) return undefined;
  const out = join(mkdtempSync(join(tmpdir(), 'iam-render-')), 'render');
  const built = spawnSync(join(__dirname, 'render', 'build.sh'), [out], { encoding: 'utf8', timeout: 120_000 });
  if (built.status !== 0) throw new Error(`building helm/test/render failed:\n${built.stderr}`);
  return out;
}
