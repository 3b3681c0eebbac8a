/**
 * A real SMTP server (the `smtp-server` package) in the test process, keeping what it receives,
 * with enough MIME handling to read the links in our mails.
 */
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  readonly to: string[];
  readonly raw: string;
  readonly messageId: string | undefined;
  readonly subject: string | undefined;
  /** The decoded text of every part (quoted-printable and base64 undone). */
  readonly text: string;
}

export interface SmtpSink {
  readonly port: number;
  readonly mails: ReceivedMail[];
  /** Resolves with the first mail matching, waiting up to `timeoutMs`. */
  waitFor(pred: (m: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  /** Delay before each message is accepted (slow server) or a failure for the next N messages. */
  behave(opts: { delayMs?: number; failNext?: number }): void;
  /** Messages whose data has arrived and whose answer is still held back (behave's delayMs). */
  answering(): number;
  close(): Promise<void>;
}

function decodeParts(raw: string): string {
  const qp = raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  const b64 = [...raw.matchAll(/Content-Transfer-Encoding: base64\r?\n(?:[^\r\n]+\r?\n)*\r?\n([A-Za-z0-9+/=\r\n]+)/g)]
    .map((m) => Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64').toString('utf8'))
    .join('\n');
  return `${qp}\n${b64}`;
}

export async function startSmtpSink(port = 0): Promise<SmtpSink> {
  const mails: ReceivedMail[] = [];
  const waiters: Array<() => void> = [];
  let delayMs = 0;
  let failNext = 0;
  let held = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const finish = () => {
          if (failNext > 0) {
            failNext--;
            const err = new Error('Temporary failure, try again') as Error & { responseCode: number };
            err.responseCode = 451;
            callback(err);
            return;
          }
          const raw = Buffer.concat(chunks).toString('utf8');
          mails.push({
            to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
            raw,
            messageId: /^Message-ID:\s*(\S+)/im.exec(raw)?.[1],
            subject: /^Subject:\s*(.+)$/im.exec(raw)?.[1]?.trim(),
            text: decodeParts(raw),
          });
          waiters.splice(0).forEach((w) => w());
          callback();
        };
        if (delayMs > 0) {
          held++;
          setTimeout(() => {
            held--;
            finish();
          }, delayMs);
        } else finish();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  // A client that dies mid-conversation (a killed sender) is not the sink's problem.
  server.on('error', () => undefined);
  const address = server.server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    mails,
    answering: () => held,
    behave: (o) => {
      if (o.delayMs !== undefined) delayMs = o.delayMs;
      if (o.failNext !== undefined) failNext = o.failNext;
    },
    async waitFor(pred, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = mails.find(pred);
        if (hit) return hit;
        if (Date.now() > deadline) throw new Error(`no matching mail within ${timeoutMs} ms (${mails.length} received)`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 100);
        });
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The token of the first `reset-password` / `verify-email` link in a mail. */
export function actionToken(mail: ReceivedMail, action: 'reset-password' | 'verify-email'): string | undefined {
  const m = new RegExp(`/${action}\\?token=([A-Za-z0-9_%.~-]+)`).exec(mail.text);
  return m ? decodeURIComponent(m[1]!) : undefined;
}
