export { readNotificationConfig, type NotificationConfig } from './config';
export { notificationService } from './service';
