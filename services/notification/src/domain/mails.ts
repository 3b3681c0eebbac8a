/** The mails the platform sends: a plain-text and an HTML part each. Links carry the token only in the URL. */
import type { OutgoingMail } from './ports';

export type MailKind = 'password_reset' | 'email_verification' | 'password_changed' | 'factor_added' | 'order_confirmation' | 'organization_invitation';

/** A sign-in method as a notice names it (identity's SignInMethod). */
export interface MethodNamed {
  readonly kind: string;
  readonly name: string;
  readonly addedAt?: Date;
}

/** `a passkey "Laptop" (added 2025-01-02 10:00 UTC)`, `an authenticator app (…)`. */
export function describeMethod(m: MethodNamed): string {
  const what = m.kind === 'totp' ? 'an authenticator app' : m.kind === 'passkey' ? `a passkey "${m.name}"` : m.kind === 'recovery_codes' ? 'recovery codes' : m.kind;
  return m.addedAt ? `${what} (added ${utc(m.addedAt)})` : what;
}

const utc = (d: Date): string => `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

const escape = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function layout(title: string, paragraphs: string[], action?: { label: string; url: string }, after: string[] = []): { text: string; html: string } {
  const text = [...paragraphs, ...(action ? ['', `${action.label}: ${action.url}`] : []), ...after].join('\n');
  const html = [
    '<!doctype html><html><body style="font-family: sans-serif">',
    `<h1 style="font-size: 18px">${escape(title)}</h1>`,
    ...paragraphs.map((p) => `<p>${escape(p)}</p>`),
    action ? `<p><a href="${escape(action.url)}">${escape(action.label)}</a></p>` : '',
    ...after.map((p) => `<p>${escape(p)}</p>`),
    '</body></html>',
  ].join('');
  return { text, html };
}

export function composeMail(
  kind: Exclude<MailKind, 'order_confirmation' | 'factor_added' | 'password_changed' | 'organization_invitation'>,
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
  }
}

/** The account page, where the user reviews the sign-in methods (none without a base URL). */
const accountPage = (actionBaseUrl?: string) => (actionBaseUrl ? { label: 'Review your sign-in methods', url: `${actionBaseUrl}/account` } : undefined);

/**
 * "Your password was changed" after a reset: every session signed out, and the sign-in methods
 * to review: those the reset removed (added shortly before it) and those that remain.
 */
export function composePasswordChanged(input: {
  to: string;
  firstName: string;
  eventId: string;
  actionBaseUrl?: string;
  removed: readonly MethodNamed[];
  kept: readonly MethodNamed[];
  reviewWindowHours: number;
}): OutgoingMail {
  const review = [
    ...(input.removed.length > 0
      ? [`For your safety, the reset removed the sign-in methods added in the ${input.reviewWindowHours} hours before it: ${input.removed.map(describeMethod).join('; ')}. If they were yours, add them again.`]
      : []),
    input.kept.length > 0
      ? `Your account still has: ${input.kept.map(describeMethod).join('; ')}. If one of them is not yours, remove it and reset your password again.`
      : 'Your account has no second factor or passkey now.',
  ];
  const body = layout(
    'Your password was changed',
    [`Hello ${input.firstName || 'there'},`, 'The password of your account was just reset and every session was signed out. If it was not you, reset your password at once and contact support.', ...review],
    accountPage(input.actionBaseUrl),
  );
  return { to: input.to, subject: 'Your password was changed', messageId: `<${input.eventId}@iam.notification>`, ...body };
}

/** "A sign-in method was added to your account" (DESIGN §5: every factor added is mailed). */
export function composeFactorAdded(input: { to: string; firstName: string; eventId: string; actionBaseUrl?: string; method: MethodNamed }): OutgoingMail {
  const where = input.actionBaseUrl ? ` at ${input.actionBaseUrl}/account` : ' on your account page';
  const body = layout(
    'A sign-in method was added to your account',
    [
      `Hello ${input.firstName || 'there'},`,
      `${capitalised(describeMethod(input.method))} was added to your account.`,
      `If it was not you, reset your password and review your sign-in methods${where}.`,
    ],
    accountPage(input.actionBaseUrl),
  );
  return { to: input.to, subject: 'A sign-in method was added to your account', messageId: `<${input.eventId}@iam.notification>`, ...body };
}

const capitalised = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/** An amount of minor units in its currency's own decimals (EUR 2, JPY 0, KWD 3), e.g. "€12.50". */
export function formatMoney(minor: number, currency: string): string {
  try {
    const fmt = new Intl.NumberFormat('en', { style: 'currency', currency });
    return fmt.format(minor / 10 ** (fmt.resolvedOptions().maximumFractionDigits ?? 2));
  } catch {
    return `${(minor / 100).toFixed(2)} ${currency}`;
  }
}

export interface OrderSummary {
  readonly orderId: string;
  readonly lines: ReadonlyArray<{ readonly sku: string; readonly name: string; readonly quantity: number; readonly unitPriceMinor: number }>;
  readonly totalMinor: number;
  readonly currency: string;
}

/** The order confirmation: the order id, each line with its price, the total. */
export function composeOrderConfirmation(input: { to: string; eventId: string; order: OrderSummary }): OutgoingMail {
  const { order } = input;
  const lines = order.lines.map(
    (l) => `${l.quantity} × ${l.name} (${l.sku}) at ${formatMoney(l.unitPriceMinor, order.currency)}: ${formatMoney(l.quantity * l.unitPriceMinor, order.currency)}`,
  );
  const body = layout(
    'Thank you for your order',
    ['Hello,', `We have received your order ${order.orderId} and reserved its items:`, ...lines, `Total: ${formatMoney(order.totalMinor, order.currency)}`],
    undefined,
    ['If you did not place this order, contact support.'],
  );
  return { to: input.to, subject: `Your order ${order.orderId.slice(0, 8)} is confirmed`, messageId: `<${input.eventId}@iam.notification>`, ...body };
}
