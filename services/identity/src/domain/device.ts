/**
 * A session's device in words, from its user agent ("Chrome 131 on Linux"): the hosted pages'
 * helper (packages/hosted-pages/src/user-agent.ts), the one the console reads agents with too.
 */
export { UNKNOWN_DEVICE, deviceOf } from '@iam/hosted-pages';
