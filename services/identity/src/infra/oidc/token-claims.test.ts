import type { OAuthClient } from '../../domain/clients';
import type { Principal } from '../../domain/model';
import { delegatedPermissions, userRights } from './token-claims';

const user = (roles: string[], permissions: string[]): Principal => ({ userId: 'u-1', firstName: 'Ada', lastName: 'L', email: 'ada@example.com', roles, permissions, emailVerified: true });
const admin = user(['Administrator'], ['users.manage']);
const holder = user(['Support'], ['users.manage', 'audit.read']);
const client = (over: Partial<OAuthClient>): OAuthClient => ({
  clientId: 'c-1',
  name: 'App',
  type: 'confidential',
  redirectUris: ['https://app.example/cb'],
  postLogoutRedirectUris: [],
  grantTypes: ['authorization_code', 'refresh_token'],
  roles: [],
  requirePar: false,
  dpopBound: false,
  apiPermissions: [],
  idTokenSignedResponseAlg: 'RS256',
  userinfoSignedResponseAlg: null,
  resourceServer: false,
  firstParty: false,
  builtIn: false,
  createdAt: new Date(0),
  updatedAt: new Date(0),
  ...over,
});

describe('delegatedPermissions: granted scopes ∩ the client’s ceiling now ∩ what the user holds now', () => {
  it('only scopes in the ceiling, only those held; an Administrator holds every one', () => {
    expect(delegatedPermissions('openid users.manage roles.manage', ['users.manage'], holder)).toEqual(['users.manage']);
    expect(delegatedPermissions('openid users.manage roles.manage', ['users.manage', 'roles.manage'], holder)).toEqual(['users.manage']);
    expect(delegatedPermissions('openid users.manage roles.manage', ['users.manage', 'roles.manage'], admin)).toEqual(['roles.manage', 'users.manage']);
  });

  it('nothing without a granted API scope, or with an empty ceiling', () => {
    expect(delegatedPermissions('openid email offline_access', ['users.manage'], admin)).toEqual([]);
    expect(delegatedPermissions(undefined, ['users.manage'], admin)).toEqual([]);
    expect(delegatedPermissions('openid users.manage', [], admin)).toEqual([]);
    // Scopes are case-sensitive: the permission's own spelling.
    expect(delegatedPermissions('Users.Manage', ['users.manage'], admin)).toEqual([]);
  });
});

describe('userRights: what a user’s token carries through a client', () => {
  it('a third-party client: the delegated permissions and never a role (the Administrator role stays home)', () => {
    expect(userRights({ scope: 'openid users.manage' }, client({ apiPermissions: ['users.manage'] }), admin)).toEqual({ roles: [], permissions: ['users.manage'] });
    expect(userRights({ scope: 'openid' }, client({}), admin)).toEqual({ roles: [], permissions: [] });
  });

  it('the first party: the user’s roles and permissions; a client gone meanwhile: nothing', () => {
    expect(userRights({ scope: 'openid' }, client({ firstParty: true }), admin)).toEqual({ roles: ['Administrator'], permissions: ['users.manage'] });
    expect(userRights({ scope: 'openid users.manage' }, null, admin)).toEqual({ roles: [], permissions: [] });
  });
});
