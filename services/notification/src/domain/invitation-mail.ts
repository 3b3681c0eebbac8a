/** The organization invitation mail (issue #41): who invites, the link that accepts (single use), until when. */
import type { OutgoingMail } from './ports';

const escape = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function composeInvitation(input: { to: string; organizationName: string; eventId: string; actionBaseUrl?: string; token?: string; expiresAt?: Date }): OutgoingMail {
  const url = `${input.actionBaseUrl}/account?invitation=${encodeURIComponent(input.token ?? '')}`;
  const until = input.expiresAt ? ` It works once, until ${input.expiresAt.toISOString().slice(0, 16).replace('T', ' ')} UTC.` : ' It works once.';
  const lines = [
    'Hello,',
    `You are invited to join the organization "${input.organizationName}". Sign in (or create an account) with this address, then accept.${until}`,
    'If you did not expect it, ignore this mail.',
  ];
  const text = [...lines, '', `Accept the invitation: ${url}`].join('\n');
  const html = [
    '<!doctype html><html><body style="font-family: sans-serif">',
    `<h1 style="font-size: 18px">${escape(`Join ${input.organizationName}`)}</h1>`,
    ...lines.map((l) => `<p>${escape(l)}</p>`),
    `<p><a href="${escape(url)}">Accept the invitation</a></p>`,
    '</body></html>',
  ].join('');
  return { to: input.to, subject: `You are invited to join ${input.organizationName}`, messageId: `<${input.eventId}@iam.notification>`, text, html };
}
