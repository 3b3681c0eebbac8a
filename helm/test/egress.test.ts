/**
 * The egress class for federation (issue #44 item 9): with restricted egress, identity alone may
 * reach the internet on 443 (upstream identity providers, clients' jwks_uri) when
 * networkPolicy.egress.identityInternet is enabled, and by default not the private, shared,
 * link-local or loopback ranges (a registered URL cannot aim identity at the cluster: SSRF).
 * Notification reaches the webhook receivers (issue #38) on the same public-only peers, always.
 */
import { join } from 'node:path';
import { type JsonObject, chartRendering, fixturesDir, hasK8sModels, k8sTypeErrors, named } from './manifests';

const { renderer, render } = chartRendering();
const run = renderer ? it : it.skip;
const restricted = ['-f', join(fixturesDir, 'inline-secrets.yaml'), '-f', join(fixturesDir, 'layers', 'operability.yaml')];
const egress = (docs: JsonObject[], c: string) => (named(docs, 'NetworkPolicy', `r-iam-${c}`).spec as JsonObject).egress as JsonObject[];
const https = (rules: JsonObject[]) => rules.filter((r) => JSON.stringify(r.ports) === JSON.stringify([{ port: 443, protocol: 'TCP' }]) && r.to !== undefined);
const PUBLIC_ONLY = [
  { ipBlock: { cidr: '0.0.0.0/0', except: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '169.254.0.0/16', '127.0.0.0/8'] } },
  { ipBlock: { cidr: '::/0', except: ['fc00::/7', 'fe80::/10', '::1/128'] } },
];
/** Notification's webhook receivers: 443, public addresses only. */
const WEBHOOKS = [{ ports: [{ port: 443, protocol: 'TCP' }], to: PUBLIC_ONLY }];

describe('egress: HTTPS to the internet for identity only', () => {
  run('off by default: no component gets the internet rule', () => {
    const docs = render(...restricted);
    for (const c of ['gateway', 'identity', 'directory', 'commerce', 'audit']) expect([c, https(egress(docs, c))]).toEqual([c, []]);
    expect(https(egress(docs, 'notification'))).toEqual(WEBHOOKS);
  });

  run('enabled: identity alone reaches 443 on public addresses, the cluster\'s private ranges excepted', () => {
    const docs = render(...restricted, '--set', 'networkPolicy.egress.identityInternet.enabled=true');
    expect(https(egress(docs, 'identity'))).toEqual([
      {
        ports: [{ port: 443, protocol: 'TCP' }],
        to: [
          { ipBlock: { cidr: '0.0.0.0/0', except: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '169.254.0.0/16', '127.0.0.0/8'] } },
          { ipBlock: { cidr: '::/0', except: ['fc00::/7', 'fe80::/10', '::1/128'] } },
        ],
      },
    ]);
    for (const c of ['gateway', 'directory', 'commerce', 'audit']) expect([c, https(egress(docs, c))]).toEqual([c, []]);
    expect(https(egress(docs, 'notification'))).toEqual(WEBHOOKS);
    if (hasK8sModels()) expect(k8sTypeErrors(docs.filter((d) => d.kind === 'NetworkPolicy'))).toBe('');
  });
});
