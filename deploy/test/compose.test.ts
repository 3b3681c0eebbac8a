/**
 * The compose file's mail links point at the gateway (issue #44: EMAIL_ACTION_BASE_URL was
 * http://localhost:3000, where nothing listens, so every link in Mailpit was dead). Read from
 * `docker-compose config` (Debian's docker-compose; no Docker engine needed): the links' base,
 * the provider's issuer (identity's PUBLIC_URL) and the gateway's PUBLIC_URL are one address, the
 * gateway's published one, by default and when PUBLIC_URL and GATEWAY_PORT are moved together;
 * mail goes out (SMTP_URL), and the gateway mounts the hosted pages the links open (Full profile).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse } from 'yaml';

const COMPOSE = '/usr/bin/docker-compose';
const deployDir = resolve(__dirname, '..');
const run = existsSync(COMPOSE) ? it : it.skip;

interface Service {
  environment?: Record<string, string | null>;
  ports?: Array<string | { published?: number | string; target?: number; host_ip?: string }>;
}

/** `docker-compose config` with these variables (and none of the caller's own IAM settings). */
function composeConfig(vars: Record<string, string> = {}): Record<string, Service> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...vars };
  const r = spawnSync(COMPOSE, ['config'], { cwd: deployDir, env, encoding: 'utf8', timeout: 60_000 });
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  return (parse(r.stdout) as { services: Record<string, Service> }).services;
}

/** The gateway's published address on this machine: [host, port] of the port mapping to its 8080. */
function published(gateway: Service): [string, number] {
  for (const p of gateway.ports ?? []) {
    if (typeof p === 'string') {
      const m = /^(?:([\d.]+):)?(\d+):8080(?:\/tcp)?$/.exec(p);
      if (m) return [m[1] ?? '0.0.0.0', Number(m[2])];
    } else if (p.target === 8080) {
      return [p.host_ip ?? '0.0.0.0', Number(p.published)];
    }
  }
  throw new Error('the gateway publishes no port for 8080');
}

describe('docker-compose: the mail links point at the gateway', () => {
  run.each<[string, Record<string, string>]>([
    ['the defaults', {}],
    ['PUBLIC_URL and GATEWAY_PORT moved together', { PUBLIC_URL: 'http://localhost:9090', GATEWAY_PORT: '9090' }],
  ])('%s', (_name, vars) => {
    const s = composeConfig(vars);
    const links = s.notification!.environment!.EMAIL_ACTION_BASE_URL;
    expect(s.notification!.environment!.SMTP_URL).toBe('smtp://mailpit:1025');
    // One address: the links', the provider's issuer, the gateway's.
    expect([s.identity!.environment!.PUBLIC_URL, s.gateway!.environment!.PUBLIC_URL]).toEqual([links, links]);
    // JWT_ISSUER is left to default to it (unset), in identity and the gateway alike.
    expect([s.identity!.environment!.JWT_ISSUER ?? null, s.gateway!.environment!.JWT_ISSUER ?? null]).toEqual([null, null]);
    // ... and that address is where the gateway is published on this machine.
    const url = new URL(links!);
    const [host, port] = published(s.gateway!);
    expect(Number(url.port || (url.protocol === 'https:' ? 443 : 80))).toBe(port);
    expect(['localhost', '127.0.0.1'].includes(url.hostname) && ['127.0.0.1', '0.0.0.0'].includes(host)).toBe(true);
    // The links open /reset-password and /verify-email: the gateway's hosted pages, mounted with the Full profile.
    expect(String(s.gateway!.environment!.GATEWAY_PROFILES).split(',')).toContain('full');
  });

  run('a public address behind a proxy moves the links with it', () => {
    const s = composeConfig({ PUBLIC_URL: 'https://iam.example.test' });
    expect(s.notification!.environment!.EMAIL_ACTION_BASE_URL).toBe('https://iam.example.test');
    expect(s.identity!.environment!.PUBLIC_URL).toBe('https://iam.example.test');
  });
});
