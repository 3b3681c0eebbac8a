import { AppError } from '@iam/platform';
import type { ClientSettings } from './clients';
import { type GivenClientSettings, checkClientSettings, newReceivers } from './client-rules';

const app: ClientSettings = {
  name: 'Reports',
  type: 'confidential',
  redirectUris: ['https://app.example/cb', 'https://app.example/other'],
  postLogoutRedirectUris: ['https://app.example/'],
  grantTypes: ['authorization_code', 'refresh_token'],
  roles: [],
  requirePar: false,
  dpopBound: false,
  apiPermissions: [],
  idTokenSignedResponseAlg: 'RS256',
  userinfoSignedResponseAlg: null,
  resourceServer: false,
};

describe('newReceivers: what in a change could let a new party receive the client’s codes or tokens', () => {
  it('a redirect URI added, the type changed either way, the device code grant turned on', () => {
    expect(newReceivers(app, { ...app, redirectUris: [...app.redirectUris, 'https://evil.example/cb'] })).toEqual(['redirectUris']);
    // Replacing one URI by another adds one.
    expect(newReceivers(app, { ...app, redirectUris: ['https://app.example/cb', 'https://evil.example/cb'] })).toEqual(['redirectUris']);
    expect(newReceivers(app, { ...app, type: 'public' })).toEqual(['type']);
    expect(newReceivers({ ...app, type: 'public' }, app)).toEqual(['type']);
    expect(newReceivers(app, { ...app, grantTypes: [...app.grantTypes, 'urn:ietf:params:oauth:grant-type:device_code'] })).toEqual(['grantTypes']);
    expect(newReceivers(app, { ...app, type: 'public', redirectUris: [...app.redirectUris, 'http://127.0.0.1:9/cb'] })).toEqual(['redirectUris', 'type']);
  });

  it('the code grant turned on makes its redirect URIs receivers', () => {
    const device: ClientSettings = { ...app, grantTypes: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'] };
    expect(newReceivers(device, { ...device, grantTypes: ['authorization_code', ...device.grantTypes] })).toEqual(['redirectUris']);
  });

  it('a removal, a rename, post-logout URIs, roles, PAR, DPoP and grants taken away do not count', () => {
    expect(newReceivers(app, { ...app, redirectUris: ['https://app.example/cb'] })).toEqual([]);
    expect(newReceivers(app, { ...app, name: 'Renamed' })).toEqual([]);
    expect(newReceivers(app, { ...app, postLogoutRedirectUris: ['https://elsewhere.example/'] })).toEqual([]);
    expect(newReceivers(app, { ...app, requirePar: true, dpopBound: true })).toEqual([]);
    expect(newReceivers(app, { ...app, grantTypes: ['authorization_code'] })).toEqual([]);
    expect(newReceivers(app, { ...app, redirectUris: [...app.redirectUris].reverse() })).toEqual([]);
    const service: ClientSettings = { ...app, redirectUris: [], grantTypes: ['client_credentials'], roles: ['Reporter'] };
    expect(newReceivers(service, { ...service, roles: [] })).toEqual([]);
  });
});

describe('checkClientSettings: apiPermissions', () => {
  const given = (apiPermissions: string[], over: Partial<ClientSettings> = {}) => ({ ...app, ...over, apiPermissions });
  const fieldsOf = (input: ReturnType<typeof given>): string[] => {
    try {
      checkClientSettings(input);
      return [];
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      return ((err as AppError).errors ?? []).map((e) => e.field);
    }
  };

  it('permission names asked as scopes, trimmed; none is fine', () => {
    expect(checkClientSettings(given([' users.manage ', 'audit.read'])).apiPermissions).toEqual(['users.manage', 'audit.read']);
    expect(checkClientSettings(given([])).apiPermissions).toEqual([]);
    // The device code grant is a sign-in too.
    expect(checkClientSettings(given(['users.manage'], { redirectUris: [], grantTypes: ['urn:ietf:params:oauth:grant-type:device_code'] })).apiPermissions).toEqual(['users.manage']);
  });

  it('each refusal names its entry or the field', () => {
    expect(fieldsOf(given(['']))).toEqual(['apiPermissions[0]']);
    expect(fieldsOf(given(['users.manage', 'x'.repeat(101)]))).toEqual(['apiPermissions[1]']);
    for (const bad of ['users manage', 'say"hi"', 'back\\slash', 'é.manage', 'tab\there']) expect(fieldsOf(given([bad]))).toEqual(['apiPermissions[0]']);
    // An OpenID scope is not an API permission, in any case.
    for (const scope of ['openid', 'profile', 'email', 'OFFLINE_ACCESS']) expect(fieldsOf(given([scope]))).toEqual(['apiPermissions[0]']);
    expect(fieldsOf(given(['users.manage', 'Users.Manage']))).toEqual(['apiPermissions']);
    expect(fieldsOf(given(Array.from({ length: 51 }, (_, i) => `p${i}.read`)))).toEqual(['apiPermissions']);
  });

  it('only for clients users sign in to: a service account has roles, not delegated permissions', () => {
    expect(fieldsOf(given(['users.manage'], { redirectUris: [], grantTypes: ['client_credentials'] }))).toEqual(['apiPermissions']);
  });
});

describe('checkClientSettings: token algorithms and the resource server flag', () => {
  const fieldsOf = (over: Partial<GivenClientSettings>): string[] => {
    try {
      checkClientSettings({ ...app, ...over });
      return [];
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      return ((err as AppError).errors ?? []).map((e) => e.field);
    }
  };

  it('RS256, ES256 or EdDSA for ID tokens; the same or null (plain JSON) for userinfo', () => {
    expect(checkClientSettings({ ...app, idTokenSignedResponseAlg: 'EdDSA', userinfoSignedResponseAlg: 'ES256' })).toMatchObject({ idTokenSignedResponseAlg: 'EdDSA', userinfoSignedResponseAlg: 'ES256' });
    expect(checkClientSettings(app)).toMatchObject({ idTokenSignedResponseAlg: 'RS256', userinfoSignedResponseAlg: null });
    for (const bad of ['none', 'HS256', 'rs256', '']) {
      expect(fieldsOf({ idTokenSignedResponseAlg: bad })).toEqual(['idTokenSignedResponseAlg']);
      expect(fieldsOf({ userinfoSignedResponseAlg: bad })).toEqual(['userinfoSignedResponseAlg']);
    }
  });

  it('a resource server is confidential', () => {
    expect(checkClientSettings({ ...app, resourceServer: true }).resourceServer).toBe(true);
    expect(fieldsOf({ type: 'public', resourceServer: true })).toEqual(['resourceServer']);
  });
});
