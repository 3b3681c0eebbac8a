/**
 * The event catalog: every subject the system publishes, the protobuf message its payload
 * is, and the JetStream stream that stores it. Subjects follow `<context>.<entity>.<verb>`.
 */
import type { BinaryWriter } from '@bufbuild/protobuf/wire';
import { AuditCheckpoint } from './gen/events/v1/audit_events';
import { OrderChanged, OrderLineSnapshot, ProductChanged, ProductState } from './gen/events/v1/commerce_events';
import { LinkEnds, NamedState, PermissionChanged, RoleChanged, RolePermissionChanged, UserChanged, UserState, UsersImported } from './gen/events/v1/directory_events';
import {
  AccountUnlocked,
  ClientChanged,
  ClientState,
  ClientTokensIssued,
  ConsentGranted,
  EmailActionRequestDeadLettered,
  EmailActionRequested,
  FactorAdded,
  LoginAttempted,
  PasswordChanged,
  RefreshReuseDetected,
  SecondFactorChanged,
  SessionEnded,
  SignInMethod,
  SubjectRevoked,
  TokenRevoked,
} from './gen/events/v1/identity_events';
import { WebhookEndpointChanged, WebhookEndpointState, WebhookMessagesReplayed, WebhookTested, WebhookUrlRefused } from './gen/events/v1/notification_events';

export {
  AccountUnlocked,
  AuditCheckpoint,
  ClientChanged,
  ClientState,
  ClientTokensIssued,
  ConsentGranted,
  EmailActionRequestDeadLettered,
  EmailActionRequested,
  FactorAdded,
  LinkEnds,
  LoginAttempted,
  NamedState,
  OrderChanged,
  OrderLineSnapshot,
  PasswordChanged,
  PermissionChanged,
  ProductChanged,
  ProductState,
  RefreshReuseDetected,
  RoleChanged,
  RolePermissionChanged,
  SecondFactorChanged,
  SessionEnded,
  SignInMethod,
  SubjectRevoked,
  TokenRevoked,
  UserChanged,
  UserState,
  UsersImported,
  WebhookEndpointChanged,
  WebhookEndpointState,
  WebhookMessagesReplayed,
  WebhookTested,
  WebhookUrlRefused,
};

interface Codec<T> {
  encode(message: T, writer?: BinaryWriter): BinaryWriter;
  decode(input: Uint8Array): T;
}

export const SUBJECTS = {
  userCreated: 'directory.user.created',
  userUpdated: 'directory.user.updated',
  userDeleted: 'directory.user.deleted',
  usersImported: 'directory.users.imported',
  roleCreated: 'directory.role.created',
  roleUpdated: 'directory.role.updated',
  roleDeleted: 'directory.role.deleted',
  permissionCreated: 'directory.permission.created',
  permissionUpdated: 'directory.permission.updated',
  permissionDeleted: 'directory.permission.deleted',
  rolePermissionCreated: 'directory.role_permission.created',
  rolePermissionUpdated: 'directory.role_permission.updated',
  rolePermissionDeleted: 'directory.role_permission.deleted',
  tokenRevoked: 'identity.token.revoked',
  subjectRevoked: 'identity.subject.revoked',
  passwordResetRequested: 'identity.password_reset.requested',
  emailVerificationRequested: 'identity.email_verification.requested',
  passwordChanged: 'identity.password.changed',
  loginSucceeded: 'identity.login.succeeded',
  loginFailed: 'identity.login.failed',
  accountLocked: 'identity.account.locked',
  refreshReuseDetected: 'identity.refresh.reuse_detected',
  clientCreated: 'identity.client.created',
  clientUpdated: 'identity.client.updated',
  clientDeleted: 'identity.client.deleted',
  clientSecretRotated: 'identity.client.secret_rotated',
  clientTokensIssued: 'identity.client.tokens_issued',
  consentGranted: 'identity.consent.granted',
  mfaEnrolled: 'identity.mfa.enrolled',
  mfaRemoved: 'identity.mfa.removed',
  mfaVerified: 'identity.mfa.verified',
  mfaFailed: 'identity.mfa.failed',
  recoveryCodeUsed: 'identity.mfa.recovery_code_used',
  mfaReset: 'identity.mfa.reset',
  factorAdded: 'identity.factor.added',
  sessionEnded: 'identity.session.ended',
  accountUnlocked: 'identity.account.unlocked',
  emailActionRequestDeadLettered: 'dead.identity.email_action_request',
  orderPlaced: 'commerce.order.placed',
  orderCancelled: 'commerce.order.cancelled',
  productCreated: 'commerce.product.created',
  productUpdated: 'commerce.product.updated',
  productArchived: 'commerce.product.archived',
  productReactivated: 'commerce.product.reactivated',
  productStockAdjusted: 'commerce.product.stock_adjusted',
  auditCheckpointSigned: 'audit.checkpoint.signed',
  webhookCreated: 'notification.webhook.created',
  webhookUpdated: 'notification.webhook.updated',
  webhookDeleted: 'notification.webhook.deleted',
  webhookSecretRotated: 'notification.webhook.secret_rotated',
  webhookDisabled: 'notification.webhook.disabled',
  webhookUrlRefused: 'notification.webhook.url_refused',
  webhookReplayed: 'notification.webhook.replayed',
  webhookTested: 'notification.webhook.tested',
} as const;

const CATALOG = {
  [SUBJECTS.userCreated]: UserChanged,
  [SUBJECTS.userUpdated]: UserChanged,
  [SUBJECTS.userDeleted]: UserChanged,
  [SUBJECTS.usersImported]: UsersImported,
  [SUBJECTS.roleCreated]: RoleChanged,
  [SUBJECTS.roleUpdated]: RoleChanged,
  [SUBJECTS.roleDeleted]: RoleChanged,
  [SUBJECTS.permissionCreated]: PermissionChanged,
  [SUBJECTS.permissionUpdated]: PermissionChanged,
  [SUBJECTS.permissionDeleted]: PermissionChanged,
  [SUBJECTS.rolePermissionCreated]: RolePermissionChanged,
  [SUBJECTS.rolePermissionUpdated]: RolePermissionChanged,
  [SUBJECTS.rolePermissionDeleted]: RolePermissionChanged,
  [SUBJECTS.tokenRevoked]: TokenRevoked,
  [SUBJECTS.subjectRevoked]: SubjectRevoked,
  [SUBJECTS.passwordResetRequested]: EmailActionRequested,
  [SUBJECTS.emailVerificationRequested]: EmailActionRequested,
  [SUBJECTS.passwordChanged]: PasswordChanged,
  [SUBJECTS.loginSucceeded]: LoginAttempted,
  [SUBJECTS.loginFailed]: LoginAttempted,
  [SUBJECTS.accountLocked]: LoginAttempted,
  [SUBJECTS.refreshReuseDetected]: RefreshReuseDetected,
  [SUBJECTS.clientCreated]: ClientChanged,
  [SUBJECTS.clientUpdated]: ClientChanged,
  [SUBJECTS.clientDeleted]: ClientChanged,
  [SUBJECTS.clientSecretRotated]: ClientChanged,
  [SUBJECTS.clientTokensIssued]: ClientTokensIssued,
  [SUBJECTS.consentGranted]: ConsentGranted,
  [SUBJECTS.mfaEnrolled]: SecondFactorChanged,
  [SUBJECTS.mfaRemoved]: SecondFactorChanged,
  [SUBJECTS.mfaVerified]: SecondFactorChanged,
  [SUBJECTS.mfaFailed]: SecondFactorChanged,
  [SUBJECTS.recoveryCodeUsed]: SecondFactorChanged,
  [SUBJECTS.mfaReset]: SecondFactorChanged,
  [SUBJECTS.factorAdded]: FactorAdded,
  [SUBJECTS.sessionEnded]: SessionEnded,
  [SUBJECTS.accountUnlocked]: AccountUnlocked,
  [SUBJECTS.emailActionRequestDeadLettered]: EmailActionRequestDeadLettered,
  [SUBJECTS.orderPlaced]: OrderChanged,
  [SUBJECTS.orderCancelled]: OrderChanged,
  [SUBJECTS.productCreated]: ProductChanged,
  [SUBJECTS.productUpdated]: ProductChanged,
  [SUBJECTS.productArchived]: ProductChanged,
  [SUBJECTS.productReactivated]: ProductChanged,
  [SUBJECTS.productStockAdjusted]: ProductChanged,
  [SUBJECTS.auditCheckpointSigned]: AuditCheckpoint,
  [SUBJECTS.webhookCreated]: WebhookEndpointChanged,
  [SUBJECTS.webhookUpdated]: WebhookEndpointChanged,
  [SUBJECTS.webhookDeleted]: WebhookEndpointChanged,
  [SUBJECTS.webhookSecretRotated]: WebhookEndpointChanged,
  [SUBJECTS.webhookDisabled]: WebhookEndpointChanged,
  [SUBJECTS.webhookUrlRefused]: WebhookUrlRefused,
  [SUBJECTS.webhookReplayed]: WebhookMessagesReplayed,
  [SUBJECTS.webhookTested]: WebhookTested,
} as const satisfies Record<string, Codec<any>>; // eslint-disable-line @typescript-eslint/no-explicit-any -- each entry has its own message type

export type EventSubject = keyof typeof CATALOG;
export type EventPayload<S extends EventSubject> = ReturnType<(typeof CATALOG)[S]['decode']>;

export function encodeEvent<S extends EventSubject>(subject: S, payload: EventPayload<S>): Uint8Array {
  return (CATALOG[subject] as unknown as Codec<EventPayload<S>>).encode(payload).finish();
}

export function decodeEvent<S extends EventSubject>(subject: S, data: Uint8Array): EventPayload<S> {
  return (CATALOG[subject] as unknown as Codec<EventPayload<S>>).decode(data);
}

export interface StreamSpec {
  /** JetStream stream name. */
  readonly name: string;
  /** Subjects it stores (NATS wildcards). */
  readonly subjects: readonly string[];
  /** How long events are kept, in seconds. */
  readonly maxAgeSeconds: number;
}

/**
 * One stream per publishing context, plus the dead-letter stream. The audit service's signed
 * checkpoints have a stream of their own, kept longer than the trail's default retention (365
 * days): they are the trail's tamper evidence outside its database.
 */
export const STREAMS = {
  directory: { name: 'DIRECTORY', subjects: ['directory.>'], maxAgeSeconds: 7 * 24 * 3600 },
  identity: { name: 'IDENTITY', subjects: ['identity.>'], maxAgeSeconds: 7 * 24 * 3600 },
  commerce: { name: 'COMMERCE', subjects: ['commerce.>'], maxAgeSeconds: 7 * 24 * 3600 },
  /** Changes to outgoing webhook endpoints (for the audit trail). */
  notification: { name: 'NOTIFICATION', subjects: ['notification.>'], maxAgeSeconds: 7 * 24 * 3600 },
  deadLetter: { name: 'DEAD_LETTER', subjects: ['dead.>'], maxAgeSeconds: 30 * 24 * 3600 },
  auditCheckpoints: { name: 'AUDIT_CHECKPOINTS', subjects: ['audit.checkpoint.>'], maxAgeSeconds: 400 * 24 * 3600 },
} as const satisfies Record<string, StreamSpec>;
