/**
 * Issue #8, point 11: no account enumeration through the gateway's public, anonymous /metrics.
 * A password-reset request answers 202 at once; the directory lookup, the token, the event and
 * the mail happen afterwards in the services, and only when the account exists. None of that may
 * show on the gateway's /metrics: every series there must move the same after requests for
 * unknown addresses as after requests for existing accounts.
 */
import { SUBJECTS } from '@iam/contracts';
import { type ReceivedMail, type SmtpSink, startSmtpSink } from '@iam/platform/testing';
import { ADMIN, type TestSystem, http, startTestSystem, strongPassword, uniqueEmail } from './harness';

jest.setTimeout(60_000);

const N = 4;
const RESET_SUBJECT = SUBJECTS.passwordResetRequested;

/** Series (name and labels, as exposed) → sample value, from the Prometheus text format. */
function parse(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([A-Za-z_:][\w:]*(?:\{.*\})?) (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    samples.set(m[1]!, Number(m[2]));
  }
  return samples;
}

/** Sum of the samples of `name` that carry every label in `labels`. */
function valueOf(samples: Map<string, number>, name: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const [key, v] of samples) {
    if (key.replace(/\{.*$/, '') !== name) continue;
    if (Object.entries(labels).every(([k, val]) => key.includes(`${k}="${val}"`))) sum += v;
  }
  return sum;
}

/**
 * Left out of the comparison, and only these:
 * - the process's default metrics (`process_*`, `nodejs_*`: CPU, memory, GC, event loop, handles),
 *   which move with time and with anything the process does;
 * - latency values, the `_sum` and `_bucket` samples of histograms (how long, not how often;
 *   their `_count` is compared);
 * - the calls the gateway makes on its own timers whatever the requests (readiness probes every
 *   second, the denylist reload, the JWKS refresh): their counts follow the clock.
 */
function compared(series: string): boolean {
  const name = series.replace(/\{.*$/, '');
  if (/^(process|nodejs)_/.test(name) || /_(sum|bucket)$/.test(name)) return false;
  return !/grpc_service="grpc\.health\.v1\.Health"|grpc_method="(ListRevokedTokens|GetJwks)"/.test(series);
}

/** How every compared series moved from `before` to `after` (series that did not move are left out). */
function movement(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const moved: Record<string, number> = {};
  for (const key of new Set([...before.keys(), ...after.keys()])) {
    if (!compared(key)) continue;
    const delta = (after.get(key) ?? 0) - (before.get(key) ?? 0);
    if (delta !== 0) moved[key] = delta;
  }
  return moved;
}

describe('no account enumeration through /metrics (end to end)', () => {
  let sys: TestSystem;
  let smtp: SmtpSink;
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) => http(sys.url(), method, path, opts);
  const requestReset = (email: string) => call('POST', '/api/v1/auth/password-reset/request', { body: { email } });
  /** The gateway's public /metrics, read as an anonymous client would. */
  const scrape = async () => {
    const r = await call('GET', '/metrics');
    expect(r.status).toBe(200);
    return parse(r.text);
  };
  /** Time for the work a request leaves behind (a lookup, an event handled) once its visible end was seen. */
  const settle = () => new Promise((r) => setTimeout(r, 1_000));
  const resetMailTo = (email: string) => (m: ReceivedMail) => m.to.includes(email) && m.subject === 'Reset your password';

  async function newUsers(n: number): Promise<string[]> {
    const admin = (await call('POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token as string;
    const emails: string[] = [];
    for (let i = 0; i < n; i++) {
      const email = uniqueEmail('metrics');
      const r = await call('POST', '/api/v1/users', { token: admin, body: { firstName: 'Ada', lastName: 'Lovelace', email, password: strongPassword() } });
      expect(r.status).toBe(201);
      emails.push(email);
    }
    return emails;
  }

  beforeAll(async () => {
    smtp = await startSmtpSink();
    sys = await startTestSystem({ env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, EMAIL_ACTION_BASE_URL: 'https://app.example' } });
  });

  afterAll(async () => {
    await sys?.stop();
    await smtp?.close();
  });

  it('every public series moves the same after reset requests for unknown addresses as for existing accounts', async () => {
    const existing = await newUsers(N);
    const unknown = Array.from({ length: N }, () => uniqueEmail('nobody'));
    await settle();

    const start = await scrape();
    for (const email of unknown) expect((await requestReset(email)).status).toBe(202);
    await settle();
    const afterUnknown = await scrape();
    for (const email of existing) expect((await requestReset(email)).status).toBe(202);
    for (const email of existing) await smtp.waitFor(resetMailTo(email), 15_000);
    await settle();
    const afterExisting = await scrape();

    const unknownMoved = movement(start, afterUnknown);
    const existingMoved = movement(afterUnknown, afterExisting);
    // Both phases really went through the reset route...
    const route = 'http_server_request_duration_seconds_count{method="POST",route="/api/v1/auth/password-reset/request",status_code="202"}';
    expect(unknownMoved[route]).toBe(N);
    // ...and nothing public tells the two apart.
    expect(existingMoved).toEqual(unknownMoved);
  });

  it("the services' series stay in their own registries, off the public /metrics", async () => {
    const [email] = await newUsers(1);
    const published = async () => valueOf(parse(await sys.identity.metrics.registry.metrics()), 'events_published_total', { subject: RESET_SUBJECT });
    const consumed = async () =>
      valueOf(parse(await sys.notification.metrics.registry.metrics()), 'events_consumed_total', { consumer: 'notification-mail', subject: RESET_SUBJECT, outcome: 'ack' });
    const [published0, consumed0] = [await published(), await consumed()];

    expect((await requestReset(email!)).status).toBe(202);
    await smtp.waitFor(resetMailTo(email!), 15_000);
    await settle();

    expect(await published()).toBe(published0 + 1);
    expect(await consumed()).toBe(consumed0 + 1);
    const names = new Set([...(await scrape()).keys()].map((k) => k.replace(/\{.*$/, '').replace(/_(count|sum|bucket)$/, '')));
    for (const serviceOnly of ['events_published_total', 'events_consumed_total', 'outbox_pending_events', 'grpc_server_handling_seconds', 'notification_mails_sent_total']) {
      expect([serviceOnly, names.has(serviceOnly)]).toEqual([serviceOnly, false]);
    }
  });
});
