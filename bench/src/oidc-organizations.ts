/**
 * Scenario 11c, organization tokens at the OpenID provider (issue #41): the organization-token
 * grant (`urn:iam:grant-type:organization_token`, a refresh token exchanged for one
 * organization's token; identity asks the directory what the member holds there at each grant)
 * in grants/s, against the OP refresh grants/s of scenario 11b in the same run; target ≥ 0.8×.
 * The bench's user is made a member of a fresh organization with a role of two permissions; each
 * of the 16 workers exchanges its own refresh token (granted `organization`), which the grant
 * reads and does not rotate.
 */
import { randomBytes } from 'node:crypto';
import { type LoadResult, type ScenarioRow, closedLoop, r1, r2 } from './load';
import { CONNECTIONS, type OidcScenarioOptions, basic, formClient, opRefreshToken } from './oidc';

const GRANT = 'urn:iam:grant-type:organization_token';
const TARGET = 0.8;

async function api(opts: OidcScenarioOptions, method: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(`${opts.base}${path}`, { method, headers: { 'content-type': 'application/json', authorization: `Bearer ${opts.adminToken}` }, body: JSON.stringify(body) });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status}`);
  return (await r.json()) as Record<string, unknown>;
}

/** Organization-token grants/s, each worker exchanging its own refresh token. */
async function exchangeLoop(base: string, client: { id: string; secret: string }, organizationId: string, tokens: string[], seconds: number): Promise<LoadResult> {
  const http = formClient(base, tokens.length);
  const authorization = basic(client.id, client.secret);
  try {
    return await closedLoop(seconds, tokens.length, async (worker) => {
      const r = await http.post('/oidc/token', { grant_type: GRANT, refresh_token: tokens[worker]!, organization_id: organizationId }, authorization);
      return r.status === 200 && typeof r.json.access_token === 'string' ? 200 : r.status || 500;
    });
  } finally {
    http.close();
  }
}

export async function organizationTokenScenario(opts: OidcScenarioOptions, app: { id: string; secret: string }, refresh: LoadResult): Promise<ScenarioRow> {
  opts.log('\n11c. organization-token grants/s vs OP refresh grants/s (11b)');
  const claims = JSON.parse(Buffer.from(opts.adminToken.split('.')[1]!, 'base64url').toString('utf8')) as { sub: string };
  const userId = claims.sub;
  const tag = randomBytes(4).toString('hex');
  const org = await api(opts, 'POST', '/api/v1/organizations', { name: 'Bench', slug: `bench-${tag}` });
  const role = await api(opts, 'POST', '/api/v1/organization-roles', { name: `bench-${tag}`, permissions: ['users.manage', 'audit.read'] });
  await api(opts, 'POST', `/api/v1/organizations/${String(org.id)}/members`, { userId, roles: [role.name] });
  const tokens: string[] = [];
  for (let i = 0; i < CONNECTIONS; i++) tokens.push(await opRefreshToken(opts.base, app, opts.user, 'openid offline_access organization'));
  const org11c = await opts.repeat(() => exchangeLoop(opts.base, app, String(org.id), tokens, opts.seconds));
  const ratio = org11c.ok / refresh.ok;
  opts.log(`   refresh ${r1(refresh.ok)}/s, organization tokens ${r1(org11c.ok)}/s`);
  return {
    scenario: `11c. organization-token grants/s ÷ OP refresh grants/s (11b, same run), ${CONNECTIONS} workers`,
    value: `${r1(org11c.ok)}/s (p99 ${r1(org11c.p99)} ms, ${org11c.non2xx} non-2xx)`,
    baseline: `OP refresh ${r1(refresh.ok)}/s (p99 ${r1(refresh.p99)} ms)`,
    ratio: r2(ratio),
    target: `≥ ${TARGET}×`,
    met: ratio >= TARGET && org11c.non2xx === 0,
  };
}
