import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, readConfig } from './config';

describe('readConfig', () => {
  const parse = (env: Record<string, string | undefined>) =>
    readConfig(env, (e) => ({
      port: e.port('PORT', { default: 8080 }),
      expiry: e.int('JWT_EXPIRY', { default: 300, min: 1 }),
      profiles: e.list('GATEWAY_PROFILES', ['full', 'compact', 'edge'] as const, { default: ['full', 'compact', 'edge'] }),
      nats: e.optionalUrl('NATS_URL', ['nats']),
      flag: e.bool('TRUST_PROXY', { default: false }),
      db: e.url('DATABASE_URL', ['postgres']),
    }));

  it('parses typed values and applies defaults', () => {
    const c = parse({ DATABASE_URL: 'postgres://x@h/db', JWT_EXPIRY: '60', TRUST_PROXY: 'true' });
    expect(c).toEqual({ port: 8080, expiry: 60, profiles: ['full', 'compact', 'edge'], nats: undefined, flag: true, db: 'postgres://x@h/db' });
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.profiles)).toBe(true);
  });

  it('an empty GATEWAY_PROFILES is the empty list (Minimal profile)', () => {
    expect(parse({ DATABASE_URL: 'postgres://h/db', GATEWAY_PROFILES: '' }).profiles).toEqual([]);
    expect(parse({ DATABASE_URL: 'postgres://h/db', GATEWAY_PROFILES: ' compact , full ' }).profiles).toEqual(['compact', 'full']);
  });

  it('reports every bad or missing variable at once, each by name', () => {
    let err: unknown;
    try {
      parse({ PORT: '99999', JWT_EXPIRY: 'soon', GATEWAY_PROFILES: 'full,admin', NATS_URL: 'http://x', TRUST_PROXY: 'maybe' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems.join('\n');
    for (const name of ['PORT', 'JWT_EXPIRY', 'GATEWAY_PROFILES', 'NATS_URL', 'TRUST_PROXY', 'DATABASE_URL']) {
      expect(problems).toContain(`${name}:`);
    }
    expect((err as ConfigError).problems).toHaveLength(6);
  });

  it('keys: base64 of 32 bytes, from the variable, a file, or a fallback; named when missing or wrong', () => {
    const dir = mkdtempSync(join(tmpdir(), 'key-'));
    const good = Buffer.alloc(32, 7).toString('base64');
    writeFileSync(`${dir}/k`, `${good}\n`);
    writeFileSync(`${dir}/bad`, 'short');
    const read = (env: Record<string, string>, required = true) => readConfig(env, (e) => ({ k: e.key('K', { required }) }));
    expect(read({ K: good }).k).toEqual(Buffer.alloc(32, 7));
    expect(read({ K_FILE: `${dir}/k` }).k).toEqual(Buffer.alloc(32, 7));
    expect(read({}, false).k).toBeUndefined();
    expect(() => read({})).toThrow(/K: is required/);
    expect(() => read({ K: 'c2hvcnQ=' })).toThrow(/K: must be base64 of exactly 32 bytes/);
    expect(() => read({ K_FILE: `${dir}/bad` })).toThrow(/K_FILE: must hold base64/);
    expect(() => read({ K_FILE: `${dir}/missing` })).toThrow(/K_FILE: cannot read/);
  });

  it('any variable may be given as NAME_FILE, a file holding its value (a mounted secret), read as NAME would be', () => {
    const dir = mkdtempSync(join(tmpdir(), 'env-file-'));
    writeFileSync(`${dir}/db`, 'postgres://app:s3cret@db/iam\n');
    writeFileSync(`${dir}/expiry`, ' 60 \n');
    writeFileSync(`${dir}/profiles`, '');
    writeFileSync(`${dir}/nats`, 'http://x');
    const c = parse({ DATABASE_URL_FILE: `${dir}/db`, JWT_EXPIRY_FILE: `${dir}/expiry`, GATEWAY_PROFILES_FILE: `${dir}/profiles` });
    expect(c).toMatchObject({ db: 'postgres://app:s3cret@db/iam', expiry: 60, profiles: [] });
    const problems = (env: Record<string, string>): string[] => {
      try {
        parse(env);
      } catch (e) {
        return [...(e as ConfigError).problems];
      }
      return [];
    };
    // A file's value is checked like the variable's; an unreadable file, or both given, is named.
    expect(problems({ DATABASE_URL: 'postgres://h/db', NATS_URL_FILE: `${dir}/nats` })).toEqual(['NATS_URL: must use nats (got http:)']);
    expect(problems({ DATABASE_URL_FILE: `${dir}/missing` })).toEqual([`DATABASE_URL_FILE: cannot read ${dir}/missing`, 'DATABASE_URL: is required']);
    expect(problems({ DATABASE_URL: 'postgres://h/db', DATABASE_URL_FILE: `${dir}/db` })).toEqual(['DATABASE_URL: is set and so is DATABASE_URL_FILE: keep one']);
    // An empty NAME_FILE is unset, as an empty NAME is.
    expect(parse({ DATABASE_URL: 'postgres://h/db', JWT_EXPIRY_FILE: '' }).expiry).toBe(300);
  });

  it('does not echo long values back in full', () => {
    expect(() => parse({ DATABASE_URL: 'postgres://h/db', JWT_EXPIRY: 'x'.repeat(500) })).toThrow(/JWT_EXPIRY: must be an integer \(got "x{40}…"\)/);
  });
});
