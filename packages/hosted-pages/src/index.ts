export { type Messages, en, messages } from './messages';
export { type PasswordPolicy, type PolicyCheck, policyChecks } from './password-policy';
export { type QrModules, qrModules, qrSvg } from './qr';
export { UNKNOWN_DEVICE, deviceOf } from './user-agent';
