export { readNotificationConfig, type NotificationConfig } from './config';
export { notificationService, type NotificationOptions } from './service';
export { MAILBOX_CAPACITY, MailboxSender, MemoryMailbox } from './infra/mailbox';
export type { MailboxMail, MailboxReader } from './domain/ports';
