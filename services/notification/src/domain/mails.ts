/** The mails the platform sends: a plain-text and an HTML part each. Links carry the token only in the URL. */
import type { OutgoingMail } from './ports';

export type MailKind = 'password_reset' | 'email_verification' | 'password_changed';

const escape = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function layout(title: string, paragraphs: string[], action?: { label: string; url: string }): { text: string; html: string } {
  const text = [...paragraphs, ...(action ? ['', `${action.label}: ${action.url}`] : [])].join('\n');
  const html = [
    '<!doctype html><html><body style="font-family: sans-serif">',
    `<h1 style="font-size: 18px">${escape(title)}</h1>`,
    ...paragraphs.map((p) => `<p>${escape(p)}</p>`),
    action ? `<p><a href="${escape(action.url)}">${escape(action.label)}</a></p>` : '',
    '</body></html>',
  ].join('');
  return { text, html };
}

export function composeMail(
  kind: MailKind,
  input: { to: string; firstName: string; eventId: string; actionBaseUrl?: string; token?: string },
): OutgoingMail {
  const hello = `Hello ${input.firstName || 'there'},`;
  const messageId = `<${input.eventId}@iam.notification>`;
  const link = (path: string) => `${input.actionBaseUrl}/${path}?token=${encodeURIComponent(input.token ?? '')}`;
  switch (kind) {
    case 'password_reset': {
      const body = layout('Reset your password', [hello, 'Someone asked to reset the password of your account. The link works once, for one hour. If it was not you, ignore this mail.'], {
        label: 'Choose a new password',
        url: link('reset-password'),
      });
      return { to: input.to, subject: 'Reset your password', messageId, ...body };
    }
    case 'email_verification': {
      const body = layout('Confirm your email address', [hello, 'Please confirm that this address is yours. The link works once, for one hour.'], {
        label: 'Confirm my email address',
        url: link('verify-email'),
      });
      return { to: input.to, subject: 'Confirm your email address', messageId, ...body };
    }
    case 'password_changed': {
      const body = layout('Your password was changed', [hello, 'The password of your account was just changed and every session was signed out. If it was not you, reset your password at once and contact support.']);
      return { to: input.to, subject: 'Your password was changed', messageId, ...body };
    }
  }
}
