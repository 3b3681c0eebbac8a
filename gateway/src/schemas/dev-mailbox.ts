import { Type } from '@sinclair/typebox';
import { Timestamp, Uuid } from './common';

/** One mail of the development mailbox, without its body (the list). */
export const MailboxSummary = Type.Object(
  {
    id: Uuid,
    to: Type.String(),
    subject: Type.String(),
    messageId: Type.String(),
    receivedAt: Timestamp,
  },
  { additionalProperties: false },
);

export const MailboxList = Type.Object(
  {
    items: Type.Array(MailboxSummary, { description: 'Newest first' }),
    /** How many mails the box keeps; the oldest goes when a new one would pass it. */
    capacity: Type.Integer({ minimum: 1 }),
  },
  { additionalProperties: false },
);

/** One mail whole: its plain-text and HTML parts, exactly as they would have been sent. */
export const MailboxMail = Type.Object(
  {
    id: Uuid,
    to: Type.String(),
    subject: Type.String(),
    messageId: Type.String(),
    receivedAt: Timestamp,
    text: Type.String(),
    html: Type.String({ description: 'Untrusted markup: show it only in a sandboxed frame without scripts, or as text' }),
  },
  { additionalProperties: false },
);
