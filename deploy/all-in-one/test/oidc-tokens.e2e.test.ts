/**
 * The OpenID provider's tokens end to end (openid-client as RP through the gateway; the hosted
 * pages walked over HTTP, support/oidc-rp.ts): codes, refresh rotation and reuse, client
 * credentials, introspection and revocation, and what ends a grant (a deleted client or user, a
 * role that now needs a second factor, the REST revoke). The pages in Chromium: oidc-pages.e2e.
 */
import { eventually } from '@iam/platform/testing';
import { ADMIN } from './harness';
import { CookieJar, oauthError, signInOverHttp } from './support/oidc-rp';
import { oidcSuite } from './support/oidc-suite';

describe('OpenID provider tokens (openid-client as RP)', () => {
  const s = oidcSuite();

  it('[OIDCC-basic] a code is single use: the second exchange fails and revokes what the first issued', async () => {
    const config = await s.discover(s.c.web);
    const a = await s.authorization(config);
    const end = await signInOverHttp(a.url);
    const tokens = await s.oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    await expect(s.oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state })).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(s.oc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('a refresh token is rotated; presenting a rotated one again once its successor was used revokes the grant', async () => {
    const config = await s.discover(s.c.web);
    const a = await s.authorization(config);
    const end = await signInOverHttp(a.url);
    const first = await s.oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    const second = await s.oc.refreshTokenGrant(config, first.refresh_token!);
    expect(second.refresh_token).toBeDefined();
    expect(second.refresh_token).not.toBe(first.refresh_token);
    // (A retry of `first` before `second` is used gets the same answer: oidc-refresh-retry.e2e.)
    const third = await s.oc.refreshTokenGrant(config, second.refresh_token!);
    await expect(s.oc.refreshTokenGrant(config, first.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(s.oc.refreshTokenGrant(config, third.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    // The reuse is in the audit trail, as a REST refresh token's is: the user, the client, the revoked grant.
    const admin = ((await (await fetch(`${s.issuer}/api/v1/auth/generate-jwt`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })).json()) as { token: string }).token;
    const sub = first.claims()!.sub;
    const reuse = await eventually(async () => {
      const r = await fetch(`${s.issuer}/api/v1/audit-events?action=refresh.reuse_detected&targetId=${sub}`, { headers: { authorization: `Bearer ${admin}` } });
      const items = ((await r.json()) as { items: Array<{ changes: Array<{ field: string; after?: unknown }> }> }).items;
      return items.find((i) => i.changes.some((c) => c.field === 'client' && c.after === s.c.web.client.clientId));
    });
    expect(reuse.changes.map((c) => c.field)).toEqual(['client', 'grant']);
  });

  it('one refresh token presented several times at once: one set of tokens at most (a later one gets it again), the others invalid_grant', async () => {
    const config = await s.discover(s.c.web);
    const a = await s.authorization(config);
    const end = await signInOverHttp(a.url);
    const first = await s.oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    const answers = await Promise.allSettled(Array.from({ length: 4 }, () => s.oc.refreshTokenGrant(config, first.refresh_token!)));
    const issued = answers.flatMap((r) => (r.status === 'fulfilled' ? [r.value.refresh_token] : []));
    expect(new Set(issued).size).toBeLessThanOrEqual(1);
    for (const r of answers) if (r.status === 'rejected') expect(r.reason).toMatchObject({ error: 'invalid_grant' });
  });

  it('a wrong password answers the sign-in page again with the same message as REST login, and no code', async () => {
    const config = await s.discover(s.c.web);
    const a = await s.authorization(config);
    const end = await signInOverHttp(a.url, { password: 'not-the-password' });
    expect(end.status).toBe(401);
    expect(end.body).toContain('The email or password is incorrect.');
    expect(end.body).toContain('role="alert"');
  });

  it('client_credentials: a service account gets an API token with sub = its client id and its roles; the gateway checks its permissions', async () => {
    const config = await s.discover(s.c.service);
    const t = await s.oc.clientCredentialsGrant(config);
    const payload = JSON.parse(Buffer.from(t.access_token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    expect(payload).toEqual(expect.objectContaining({ iss: s.issuer, sub: s.c.service.client.clientId, aud: 'iam-api', client_id: s.c.service.client.clientId, roles: ['Reporter'] }));
    // Authenticated (not 401) but without users.read: 403.
    const users = await fetch(`${s.issuer}/api/v1/users`, { headers: { authorization: `Bearer ${t.access_token}` } });
    expect(users.status).toBe(403);
    // A wrong secret: invalid_client.
    expect(await oauthError(s.oc.clientCredentialsGrant(await s.discover(s.c.service, 'not-the-secret')))).toBe('invalid_client');
  });

  it('introspection and revocation (confidential clients, their own tokens only): a refresh token is active until revoked; an API JWT to its own client only', async () => {
    const config = await s.discover(s.c.web);
    const a = await s.authorization(config);
    const end = await signInOverHttp(a.url);
    const t = await s.oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    const active = await s.oc.tokenIntrospection(config, t.refresh_token!);
    expect(active).toEqual(expect.objectContaining({ active: true, client_id: s.c.web.client.clientId, iss: s.issuer, scope: 'openid email offline_access' }));
    // Another confidential client learns nothing of it, and cannot revoke it.
    const other = await s.discover(s.c.other);
    expect(await s.oc.tokenIntrospection(other, t.refresh_token!)).toEqual({ active: false });
    await s.oc.tokenRevocation(other, t.refresh_token!).catch(() => undefined);
    expect((await s.oc.tokenIntrospection(config, t.refresh_token!)).active).toBe(true);
    await s.oc.tokenRevocation(config, t.refresh_token!);
    expect((await s.oc.tokenIntrospection(config, t.refresh_token!)).active).toBe(false);
    // A structured (JWT) access token is introspectable too (issue #36: the library alone refused
    // it), by its own client; another client learns nothing (oidc-introspection.e2e has the rest).
    const service = await s.discover(s.c.service);
    const svc = await s.oc.clientCredentialsGrant(service);
    expect(await s.oc.tokenIntrospection(service, svc.access_token)).toEqual(expect.objectContaining({ active: true, client_id: s.c.service.client.clientId, sub: s.c.service.client.clientId }));
    expect(await s.oc.tokenIntrospection(config, svc.access_token)).toEqual({ active: false });
  });

  it('a deleted client: its refresh tokens stop working (the registry no longer knows it)', async () => {
    const config = await s.discover(s.c.doomed);
    const a = await s.authorization(config);
    const end = await signInOverHttp(a.url);
    const t = await s.oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    s.clients.remove(s.c.doomed.client.clientId);
    expect(await oauthError(s.oc.refreshTokenGrant(config, t.refresh_token!))).toBe('invalid_client');
  });

  it('a revoked subject (the user deleted): the grants and refresh tokens of the user at the provider end', async () => {
    const { userId, email, password } = await s.newUser();
    const config = await s.discover(s.c.web);
    const a = await s.authorization(config);
    const end = await signInOverHttp(a.url, { email, password });
    const t = await s.oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    expect(t.claims()!.sub).toBe(userId);
    const del = await s.asAdmin('DELETE', `/api/v1/users/${userId}`);
    expect(del.status).toBe(204);
    // The deletion reaches identity as an event, then its subject revocation ends the provider's records.
    const deadline = Date.now() + 10_000;
    let rows = 1;
    while (Date.now() < deadline) {
      const [r] = await s.system.identity.dataSource.query<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM oidc_payloads WHERE account_id = $1`, [userId]);
      rows = r!.n;
      if (rows === 0) break;
      await new Promise((r2) => setTimeout(r2, 100));
    }
    expect(rows).toBe(0);
    await expect(s.oc.refreshTokenGrant(config, t.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('MFA_REQUIRED_ROLES reaches a provider session already open: given the role after a password-only sign-in, the refresh token is invalid_grant and prompt=none login_required', async () => {
    expect([201, 409]).toContain((await s.asAdmin('POST', '/api/v1/roles', { name: 'Secured', description: 'must use a second factor' })).status);
    const { userId, email, password } = await s.newUser();
    const config = await s.discover(s.c.web);
    const jar = new CookieJar();
    const a = await s.authorization(config);
    const end = await signInOverHttp(a.url, { email, password, jar });
    const t = await s.oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    const refreshed = await s.oc.refreshTokenGrant(config, t.refresh_token!);
    expect((await s.asAdmin('PUT', `/api/v1/users/${userId}`, { roles: ['Secured'] })).status).toBe(200);
    // Identity reads roles through its principal cache, dropped by the directory's event.
    // A refresh token is rotated on use: each success hands on its successor.
    let refresh = refreshed.refresh_token!;
    await eventually(async () => {
      const grant = s.oc.refreshTokenGrant(config, refresh);
      const error = await oauthError(grant);
      if (error === undefined) refresh = (await grant).refresh_token!;
      return error === 'invalid_grant';
    }, 10_000, 200);
    const silent = await signInOverHttp((await s.authorization(config, { prompt: 'none', scope: 'openid email' })).url, { jar });
    expect(silent.url.searchParams.get('error')).toBe('login_required');
  });

  it('revoke (POST /api/v1/auth/revoke) with a provider-issued API token ends the account\'s provider sessions and refresh tokens at once, not only their rows in the list', async () => {
    const { email, password } = await s.newUser();
    const config = await s.discover(s.c.web);
    const jar = new CookieJar();
    const a = await s.authorization(config);
    const end = await signInOverHttp(a.url, { email, password, jar });
    const t = await s.oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    const api = await s.oc.refreshTokenGrant(config, t.refresh_token!, { resource: `${s.issuer}/api` });
    const revoked = await fetch(`${s.issuer}/api/v1/auth/revoke`, { method: 'POST', headers: { authorization: `Bearer ${api.access_token}` } });
    expect(revoked.status).toBe(204);
    // At once: no event to wait for.
    expect(await oauthError(s.oc.refreshTokenGrant(config, api.refresh_token!))).toBe('invalid_grant');
    const silent = await signInOverHttp((await s.authorization(config, { prompt: 'none', scope: 'openid email' })).url, { jar });
    expect(silent.url.searchParams.get('error')).toBe('login_required');
  });

  it('hosted factor step: reloaded after its mfa token expired, the enrolment goes back to the sign-in page (401) and its options answer 401 JSON, never a 500', async () => {
    const { userId, email, password } = await s.newUser(['Secured']);
    const jar = new CookieJar();
    const config = await s.discover(s.c.web);
    const enrol = await signInOverHttp((await s.authorization(config)).url, { email, password, jar });
    expect(enrol.status).toBe(200);
    expect(enrol.body).toContain('Set up a second factor');
    // The page answered the sign-in form's POST: the interaction is the URL without its step.
    const interaction = enrol.url.href.replace(/\/login$/, '');
    await s.system.identity.dataSource.query(`UPDATE mfa_challenges SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [userId]);
    const options = await fetch(`${interaction}/factor/register-options`, { method: 'POST', headers: { cookie: jar.header() } });
    expect(options.status).toBe(401);
    expect(options.headers.get('content-type')).toContain('application/json');
    const again = await fetch(interaction, { headers: { cookie: jar.header() } });
    expect(again.status).toBe(401);
    const page = await again.text();
    expect(page).toContain('The sign-in took too long');
    expect(page).toContain('name="password"');
  });
});
