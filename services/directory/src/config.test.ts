import { readConfig } from '@iam/platform';
import { readDirectoryConfig } from './config';

const base = { DIRECTORY_DATABASE_URL: 'postgres://localhost/directory' };
const read = (env: Record<string, string>) => readConfig({ ...base, ...env }, (e) => readDirectoryConfig(e));

describe('directory config: the migration hook', () => {
  it('is off by default; https with a secret of 32+ characters, or http on loopback', () => {
    expect(read({}).migrationHook).toBeUndefined();
    const secret = 'k'.repeat(32);
    expect(read({ PASSWORD_MIGRATION_HOOK_URL: 'https://legacy.example/check', PASSWORD_MIGRATION_HOOK_SECRET: secret }).migrationHook).toEqual({ url: 'https://legacy.example/check', secret });
    expect(read({ PASSWORD_MIGRATION_HOOK_URL: 'http://127.0.0.1:9000/check', PASSWORD_MIGRATION_HOOK_SECRET: secret }).migrationHook?.url).toBe('http://127.0.0.1:9000/check');
  });

  it('refuses plain http elsewhere, a short or missing secret, and a secret without a URL', () => {
    expect(() => read({ PASSWORD_MIGRATION_HOOK_URL: 'http://legacy.example/check', PASSWORD_MIGRATION_HOOK_SECRET: 'k'.repeat(32) })).toThrow(/PASSWORD_MIGRATION_HOOK_URL: must use https/);
    expect(() => read({ PASSWORD_MIGRATION_HOOK_URL: 'https://legacy.example/check', PASSWORD_MIGRATION_HOOK_SECRET: 'short' })).toThrow(/PASSWORD_MIGRATION_HOOK_SECRET/);
    expect(() => read({ PASSWORD_MIGRATION_HOOK_URL: 'https://legacy.example/check' })).toThrow(/PASSWORD_MIGRATION_HOOK_SECRET/);
    expect(() => read({ PASSWORD_MIGRATION_HOOK_SECRET: 'k'.repeat(32) })).toThrow(/PASSWORD_MIGRATION_HOOK_URL: is required/);
  });
});
