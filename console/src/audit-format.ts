/**
 * How the audit trail reads to a person: each action the services record (services/audit/src/app/
 * describe.ts; test/audit-format.test.ts fails when one has no label here) as words, an unknown
 * one as its code; a user agent as "Chrome 156 on Linux".
 */
import { deviceOf } from '@iam/hosted-pages';

const ACTIONS: Readonly<Record<string, string>> = {
  'user.created': 'User created',
  'user.updated': 'User updated',
  'user.roles.changed': 'User roles changed',
  'user.deleted': 'User deleted',
  'users.imported': 'Users imported',
  'role.created': 'Role created',
  'role.updated': 'Role updated',
  'role.deleted': 'Role deleted',
  'permission.created': 'Permission created',
  'permission.updated': 'Permission updated',
  'permission.deleted': 'Permission deleted',
  'role.permission.granted': 'Permission granted to a role',
  'role.permission.revoked': 'Permission revoked from a role',
  'role.permission.changed': 'Role permission changed',
  'login.succeeded': 'Signed in',
  'login.failed': 'Sign-in failed',
  'account.locked': 'Account locked',
  'token.revoked': 'Signed out',
  'sessions.revoked': 'All sessions ended',
  'refresh.reuse_detected': 'Refresh token reused (sessions ended)',
  'mfa.enrolled': 'Second factor enrolled',
  'mfa.removed': 'Second factor removed',
  'mfa.verified': 'Second factor accepted',
  'mfa.failed': 'Second factor refused',
  'mfa.recovery_code.used': 'Recovery code used',
  'mfa.reset': 'Second factors reset by an administrator',
  'factor.added': 'Sign-in method added (the user was mailed)',
  'session.ended': 'Session ended',
  'account.unlocked': 'Account unlocked',
  'password.reset.requested': 'Password reset requested',
  'password.reset.completed': 'Password reset completed',
  'password.changed': 'Password changed',
  'email.verification.requested': 'Email verification requested',
  'order.placed': 'Order placed',
  'order.cancelled': 'Order cancelled',
  'product.created': 'Product created',
  'product.updated': 'Product updated',
  'product.archived': 'Product archived',
  'product.reactivated': 'Product back on sale',
  'product.stock.adjusted': 'Stock adjusted',
  'client.created': 'OAuth client registered',
  'client.updated': 'OAuth client changed',
  'client.deleted': 'OAuth client deleted',
  'client.secret.rotated': 'OAuth client secret rotated',
  'client.tokens_issued': 'Tokens issued to an OAuth client (per minute)',
  'consent.granted': 'Access granted to an app',
  'webhook.created': 'Webhook endpoint registered',
  'webhook.updated': 'Webhook endpoint changed',
  'webhook.deleted': 'Webhook endpoint deleted',
  'webhook.secret.rotated': 'Webhook secret rotated',
  'webhook.disabled': 'Webhook endpoint disabled by the platform',
  'webhook.url.refused': 'Webhook address refused (SSRF guard)',
  'webhook.messages.replayed': 'Webhook messages replayed',
  'webhook.tested': 'Webhook test sent',
  'identity_provider.created': 'Identity provider configured',
  'identity_provider.updated': 'Identity provider changed',
  'identity_provider.deleted': 'Identity provider deleted',
  'identity.linked': 'Sign-in with another provider linked',
  'identity.unlinked': 'Sign-in with another provider unlinked',
  'federation.refused': 'Sign-in through another provider refused',
};

/** The actions that have a label (the test holds them against the audit service's). */
export const LABELLED_ACTIONS: readonly string[] = Object.keys(ACTIONS);

/** An action in words; one this console does not know yet, as its code. */
export const actionLabel = (action: string): string => ACTIONS[action] ?? action;

/** "Chrome 156 on Linux", "Firefox 140 on Windows", "curl 8", "node"; the start of anything else; '' for none (the hosted pages' reader, @iam/hosted-pages). */
export const userAgentSummary = (ua: string): string => (ua ? deviceOf(ua) : '');
