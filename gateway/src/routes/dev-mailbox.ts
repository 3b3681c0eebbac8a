/**
 * The development mailbox (`GET /api/v1/dev/mailbox`, `GET /api/v1/dev/mailbox/{id}`;
 * users.manage; registered inside `requiring('users.manage', ...)`): the mails the all-in-one
 * (`make run` with no SMTP_URL) kept instead of sending them, so a newcomer can follow every mail
 * flow in the console. Mounted only when the gateway is given a mailbox, which only the
 * all-in-one's composition root does (the same process as the notification service: no network
 * hop); a gateway process of its own has no such route at all (404). Its answers hold live
 * email-action tokens: authenticated responses are `Cache-Control: no-store` (plugins/app/auth.ts).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '@iam/platform/core';
import { IdParams, problems } from '../schemas/common';
import { MailboxList, MailboxMail } from '../schemas/dev-mailbox';

/** A mail as the development mailbox keeps it. */
export interface DevMailboxMail {
  readonly id: string;
  readonly to: string;
  readonly subject: string;
  readonly messageId: string;
  readonly text: string;
  readonly html: string;
  readonly receivedAt: Date;
}

/** The port the gateway reads the development mailbox through (notification's MemoryMailbox in the all-in-one). */
export interface DevMailbox {
  readonly capacity: number;
  /** Newest first. */
  list(): readonly DevMailboxMail[];
  get(id: string): DevMailboxMail | undefined;
}

export const DEV_MAILBOX_PATH = '/api/v1/dev/mailbox';

export interface DevMailboxRoutesOptions {
  readonly mailbox: DevMailbox;
}

export const devMailboxRoutes: FastifyPluginAsyncTypebox<DevMailboxRoutesOptions> = async (app, { mailbox }) => {
  const tags = ['development'];
  app.get(
    DEV_MAILBOX_PATH,
    { schema: { tags, summary: 'The development mailbox, newest first (make run without SMTP_URL only)', response: { 200: MailboxList } } },
    async () => ({
      items: mailbox.list().map(({ id, to, subject, messageId, receivedAt }) => ({ id, to, subject, messageId, receivedAt })),
      capacity: mailbox.capacity,
    }),
  );
  app.get(
    `${DEV_MAILBOX_PATH}/:id`,
    { schema: { tags, summary: 'One mail of the development mailbox, with its text and HTML parts', params: IdParams, response: { 200: MailboxMail, ...problems(400, 404) } } },
    async (req) => {
      const mail = mailbox.get(req.params.id);
      if (!mail) throw AppError.notFound('There is no such mail in the mailbox (it may have made room for newer ones).');
      const { id, to, subject, messageId, receivedAt, text, html } = mail;
      return { id, to, subject, messageId, receivedAt, text, html };
    },
  );
};
