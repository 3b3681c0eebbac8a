export { buildApp, BODY_LIMIT_BYTES, type AppDeps } from './app';
export { readGatewayConfig, PROFILES, type GatewayConfig, type Profile } from './config';
export { startGateway, type GatewayRuntime, type RunningGateway } from './gateway';
export { ResponseChecker } from './docs/response-check';
export { typeDefs as edgeTypeDefs } from './routes/edge/graphql/schema';
export { openApiDocument } from './docs/document';
export { DEV_MAILBOX_PATH, type DevMailbox, type DevMailboxMail } from './routes/dev-mailbox';
