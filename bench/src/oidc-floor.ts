// Floor of the provider scenarios (issue #28): a bare oidc-provider, its in-memory adapter, one
// static confidential client, no resource server, no audit, no registry, no gateway. What the
// library itself sustains on this machine, measured in the same run as our provider.
//   node oidc-floor.js <port>   → POST /token (client_credentials, refresh_token);
//                                 GET /_seed?n=16 → n refresh tokens of fresh grants (JSON array)
import { createServer } from 'node:http';
import { FLOOR_CLIENT } from './oidc';

async function main(): Promise<void> {
  const port = Number(process.argv[2] ?? 18092);
  const { default: Provider } = await import('oidc-provider');
  const provider = new Provider(`http://127.0.0.1:${port}`, {
    clients: [
      {
        client_id: FLOOR_CLIENT.id,
        client_secret: FLOOR_CLIENT.secret,
        grant_types: ['client_credentials', 'refresh_token', 'authorization_code'],
        redirect_uris: ['http://127.0.0.1/cb'],
        response_types: ['code'],
      },
    ],
    features: { clientCredentials: { enabled: true }, devInteractions: { enabled: false } },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    rotateRefreshToken: true,
  });
  // The refresh chains start from grants made here (no sign-in pages in the floor).
  const seed = async (n: number): Promise<string[]> => {
    const client = await provider.Client.find(FLOOR_CLIENT.id);
    if (!client) throw new Error('no floor client');
    const tokens: string[] = [];
    for (let i = 0; i < n; i++) {
      const accountId = `bench-${i}`;
      const grant = new provider.Grant({ accountId, clientId: FLOOR_CLIENT.id });
      grant.addOIDCScope('openid offline_access');
      const grantId = await grant.save();
      const rt = new provider.RefreshToken({ accountId, client, grantId, scope: 'openid offline_access', gty: 'authorization_code', authTime: Math.floor(Date.now() / 1000) });
      tokens.push(await rt.save());
    }
    return tokens;
  };
  const callback = provider.callback();
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/_seed')) {
      const n = Number(new URL(req.url, 'http://x').searchParams.get('n') ?? 16);
      seed(Math.min(Math.max(n, 1), 1_000)).then(
        (t) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(t));
        },
        (err: unknown) => {
          res.writeHead(500);
          res.end(String(err));
        },
      );
      return;
    }
    void callback(req, res);
  });
  server.listen(port, '127.0.0.1', () => process.send?.('ready'));
}

void main();
