/**
 * Scenario 5: a password-reset request until its mail is accepted by the SMTP server (p50/p99,
 * over BENCH_MAIL_REQUESTS requests, one at a time: pure latency, no queueing), against sending the same mail straight to the
 * same server with nodemailer; scenario 6: sustained events/s through gateway → identity → outbox
 * → NATS → notification → SMTP, against raw SMTP sends/s.
 */
import type { SmtpSink } from '@iam/platform/testing';
import nodemailer from 'nodemailer';
import { type ScenarioRow, median, r1 } from './load';

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

export async function mailScenarios(opts: { base: string; smtp: SmtpSink; emails: string[]; log: (s: string) => void }): Promise<ScenarioRow[]> {
  const { base, smtp, emails, log } = opts;
  const request = (email: string) =>
    fetch(`${base}/api/v1/auth/password-reset/request`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) }).then(async (r) => {
      await r.arrayBuffer();
      if (r.status !== 202) throw new Error(`reset request answered ${r.status}`);
    });

  // Baseline: the same kind of mail sent directly (pooled transport, 4 at a time).
  const direct = nodemailer.createTransport({ host: '127.0.0.1', port: smtp.port, pool: true, maxConnections: 8, ignoreTLS: true });
  const directLat: number[] = [];
  const mail = { from: 'bench@iam', to: 'direct@mail.bench', subject: 'Reset your password', text: 'x'.repeat(600), html: `<p>${'x'.repeat(600)}</p>` };
  for (let i = 0; i < Math.min(emails.length, 300); i++) {
    const t = performance.now();
    await direct.sendMail(mail);
    directLat.push(performance.now() - t);
  }
  // Raw throughput: 8 at a time, as the notification service sends.
  let di = 0;
  const directStart = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (di < Math.min(emails.length, 500)) {
        di++;
        await direct.sendMail(mail);
      }
    }),
  );
  const directRate = di / ((performance.now() - directStart) / 1000);
  direct.close();

  // 5. request → mail, one request at a time, one user per request.
  const latencies: number[] = [];
  for (const email of emails) {
    const before = smtp.mails.length;
    const t = performance.now();
    await request(email);
    await smtp.waitFor((m) => m.to.includes(email) && smtp.mails.indexOf(m) >= before, 30_000);
    latencies.push(performance.now() - t);
  }
  const p50 = pct(latencies, 50);
  const p99 = pct(latencies, 99);
  log(`   request → mail p50 ${r1(p50)} ms, p99 ${r1(p99)} ms (direct SMTP p99 ${r1(pct(directLat, 99))} ms)`);

  // 6. sustained: every request at once (32 in flight), until every mail arrived.
  const mark = smtp.mails.length;
  const started = performance.now();
  let k = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (k < emails.length) await request(emails[k++]!);
    }),
  );
  const deadline = Date.now() + 120_000;
  while (smtp.mails.length - mark < emails.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const seconds = (performance.now() - started) / 1000;
  const rate = (smtp.mails.length - mark) / seconds;
  log(`   sustained ${r1(rate)} events/s (${smtp.mails.length - mark} mails in ${r1(seconds)} s; direct SMTP ${r1(directRate)}/s)`);

  return [
    {
      scenario: `5. password-reset request → mail accepted by SMTP, ${latencies.length} requests one at a time (÷ direct SMTP send p99)`,
      value: `p50 ${r1(p50)} ms, p99 ${r1(p99)} ms`,
      baseline: `p99 ${r1(pct(directLat, 99))} ms (median ${r1(median(directLat))})`,
      ratio: Math.round((p99 / pct(directLat, 99)) * 100) / 100,
      target: 'p99 ≤ 100 ms',
      met: p99 <= 100,
    },
    {
      scenario: '6. sustained events/s through the pipeline (÷ direct SMTP sends/s)',
      value: `${r1(rate)}/s`,
      baseline: `${r1(directRate)}/s`,
      ratio: Math.round((rate / directRate) * 100) / 100,
      target: '≥ 0.8',
      met: rate / directRate >= 0.8,
    },
  ];
}
