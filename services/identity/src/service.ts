/**
 * The identity service: composition of its stores, keys, directory client, use cases, gRPC
 * handlers and event consumers.
 */
import { STREAMS } from '@iam/contracts';
import { BatchLoop, type ServiceRuntime, type ServiceSpec } from '@iam/platform';
import { identityConsumers } from './api/consumers';
import { clientsGrpc } from './api/clients-grpc';
import { identityProvidersGrpc } from './api/identity-providers-grpc';
import { linkedIdentitiesGrpc } from './api/linked-identities-grpc';
import type { PresetEndpoints } from './infra/federation/upstream-client';
import { wireFederation } from './infra/federation/wiring';
import { identityGrpc } from './api/grpc';
import { createAccountAccess } from './app/account-access';
import { type AuthFaults, createAuthUseCases } from './app/auth';
import { createAccessTokenUseCases } from './app/access-tokens';
import { createClientUseCases } from './app/clients';
import { createIdentityProviderUseCases } from './app/identity-providers';
import { createEmailActionUseCases } from './app/email-actions';
import { createOpAudit } from './app/op-audit';
import { createImportTotp } from './app/import-totp';
import { createMyFactorUseCases } from './app/my-factors';
import { createPasskeyUseCases } from './app/passkeys';
import { rekeyLegacyRecoveryCodes } from './app/recovery-codes';
import { createSecondFactorUseCases } from './app/second-factor';
import { createSignInFlow } from './app/signin/flow';
import { createRestSignIn } from './app/signin/rest';
import { createStrategyRegistry } from './app/signin/strategy';
import { passkeyStrategy } from './app/signin/strategies/passkey';
import { passwordStrategy } from './app/signin/strategies/password';
import { createUpstreamTickets, upstreamStrategy } from './app/signin/strategies/upstream';
import { recoveryCodeStrategy } from './app/signin/strategies/recovery-code';
import { totpStrategy } from './app/signin/strategies/totp';
import { createSessionUseCases } from './app/sessions';
import { createTotpSecrets } from './app/totp-secrets';
import { type IdentityConfig, identityKey, totpSealingKeys } from './config';
import { builtInClients } from './domain/clients';
import { SealingKeys } from './domain/sealing';
import { grpcDirectory } from './infra/directory-client';
import { organizationGrants, organizationTokens } from './organization-tokens-wiring';
import { cachedDirectory } from './infra/principal-cache';
import { cachedClients, invalidatingClientUseCases } from './infra/client-cache';
import { KeyRing } from './infra/key-ring';
import { sealedSecret } from './infra/sealed-secrets';
import { registerSigningKeyAge } from './infra/key-metrics';
import { entities, migrations } from './infra/schema';
import { createSecurityMetrics, grantLabel, meteredUnitOfWork } from './infra/security-metrics';
import { pgIdentityStores, pgUnitOfWork, purgeExpired } from './infra/stores';
import { JwtTokenService } from './infra/token-service';
import { opRequestHandler, startOpServer } from './api/op/http';
import { federationRoutes } from './api/op/federation-http';
import { federationSignIn } from './api/op/federation-signin';
import { opPages } from './api/op/library-pages';
import type { ClientLookup } from './domain/clients';
import { OpHost } from './infra/oidc/op-host';
import { purgeExpiredOidc, revokeOidcSubject } from './infra/oidc/pg-adapter';
import { ID_TOKEN_SECONDS, createProvider } from './infra/oidc/provider';
import { opaqueAccessTokens, opaqueTokenJti } from './infra/oidc/opaque-tokens';
import { OpSessionIds } from './infra/oidc/session-ids';
import { RefreshRetry } from './infra/oidc/refresh-retry';
import { TokenRequestWrites } from './infra/oidc/token-writes';
import { opTokenWrites } from './infra/session-store';

export interface IdentityOptions {
  /** Only the fault suite's build (src/testing/fault-main.ts) passes any. */
  readonly faults?: AuthFaults;
  /** The OAuth client registry the provider reads (none until the clients store is wired; tests pass their own). */
  readonly clients?: ClientLookup;
  /** Called with the provider's HTTP port once it listens (the all-in-one points the gateway at it). */
  readonly onOpListening?: (port: number) => void;
  /** Where the GitHub and Google presets live (tests: local stand-ins). */
  readonly federationPresets?: PresetEndpoints;
}

export function identityService(config: IdentityConfig, rt: ServiceRuntime, opts: IdentityOptions = {}): ServiceSpec {
  const { faults } = opts;
  return {
    name: 'identity',
    databaseUrl: config.databaseUrl,
    grpcPort: config.grpcPort,
    entities,
    migrations,
    streams: [STREAMS.identity, STREAMS.directory, STREAMS.deadLetter],
    build: async ({ dataSource, logger }) => {
      // The key ring keeps, rotates and publishes the signing keys (one per algorithm: RS256 for ID
      // tokens, JWT_ALG for access tokens, ...); tokens are made over it. A retired key stays
      // published until the last access or ID token it signed has expired.
      const keys = new KeyRing({
        dataSource,
        alg: config.jwt.alg,
        keyEncryptionKey: config.jwt.keyEncryptionKey,
        previousKeyEncryptionKeys: config.jwt.previousKeyEncryptionKeys,
        rotationHours: config.jwt.keyRotationHours,
        tokenLifetimeSeconds: Math.max(config.jwt.expirySeconds, ID_TOKEN_SECONDS),
        logger,
      });
      await keys.start();
      const tokens = new JwtTokenService(keys, { tokenLifetimeSeconds: config.jwt.expirySeconds, issuer: config.jwt.issuer, audience: config.jwt.audience });
      registerSigningKeyAge(rt.metrics, keys);
      const directoryClient = grpcDirectory(config.directoryTarget, rt.metrics, { key: rt.callKey, from: 'identity' }, rt.grpcClientCredentials);
      // Principals and role permissions kept until a directory event changes them (or not at all),
      // for what tokens carry only (a refresh's or a grant's claims follow a change within the
      // event's way). Authorization decisions and the write paths (email actions, client and
      // session management, factors) ask the directory itself: a right just taken away, or an
      // email just changed, must count at once.
      const cached = config.cache.enabled ? cachedDirectory(directoryClient, { ...config.cache, metrics: rt.metrics }) : undefined;
      const tokenDirectory = cached?.directory ?? directoryClient;
      const directory = directoryClient;
      // The configuration's clients (the console) stand in front of the stored ones.
      const clients = builtInClients(config.publicUrl);
      // Sign-ins, lockouts, factors and refresh reuse counted from what each transaction commits.
      const security = createSecurityMetrics(rt.metrics.registry);
      const uow = meteredUnitOfWork(pgUnitOfWork(dataSource, clients), security);
      // Statements outside any transaction, each committed on its own.
      const stores = pgIdentityStores(dataSource.manager, clients);
      const passkeys = createPasskeyUseCases({
        settings: { rpId: config.webauthn.rpId, origins: config.webauthn.origins, rpName: 'IAM', challengeKey: identityKey(config.jwt.keyEncryptionKey, 'webauthn-sign-in-challenge') },
        uow,
        stores,
        directory,
        logger,
      });
      const totpKeys = totpSealingKeys(config.jwt);
      // Random, sealed in the database under the key-encryption key: it outlives a rotation of that key.
      const recoveryKey = await sealedSecret(dataSource, 'recovery-code-key', new SealingKeys(config.jwt.keyEncryptionKey, config.jwt.previousKeyEncryptionKeys));
      // Recovery codes stored as plain SHA-256 (before keyed digests) are re-keyed once, here.
      const rekeyed = await rekeyLegacyRecoveryCodes(uow, recoveryKey);
      if (rekeyed > 0) logger.info({ rekeyed }, 'legacy recovery-code digests re-keyed (HMAC under the recovery-code key)');
      const secondFactor = createSecondFactorUseCases({ uow, stores });
      const upstreamTickets = createUpstreamTickets();
      // The sign-in flow and its strategies: a new factor is one more module in this list.
      const strategies = createStrategyRegistry([
        passwordStrategy({ directory }),
        totpStrategy({ totp: createTotpSecrets({ totpKeys, issuer: config.jwt.issuer, stores, directory }), stores, directory }),
        passkeyStrategy({ passkeys, principals: tokenDirectory }),
        recoveryCodeStrategy({ recoveryKey, stores }),
        // A sign-in through another identity provider, checked before the flow (app/federation.ts): a ticket.
        upstreamStrategy({ tickets: upstreamTickets, principals: tokenDirectory }),
      ]);
      // Who is a member of which organization, asked of the directory now (never cached): the flow's gate, the provider's grant, REST.
      const orgGrants = organizationGrants(config, rt);
      const flow = createSignInFlow({
        settings: { maxFailedAttempts: config.auth.maxFailedAttempts, lockoutMinutes: config.auth.lockoutMinutes, requiredRoles: config.mfa.requiredRoles },
        uow,
        stores,
        strategies,
        principals: tokenDirectory,
        passwords: tokenDirectory,
        organizations: orgGrants,
        logger,
      });
      const auth = createAuthUseCases({
        settings: {
          maxFailedAttempts: config.auth.maxFailedAttempts,
          lockoutMinutes: config.auth.lockoutMinutes,
          refreshExpirySeconds: config.jwt.refreshExpirySeconds,
          refreshReuseGraceSeconds: config.auth.refreshReuseGraceSeconds,
          accessExpirySeconds: config.jwt.expirySeconds,
          requiredRoles: config.mfa.requiredRoles,
        },
        uow,
        stores,
        directory,
        principals: tokenDirectory,
        tokens,
        logger,
        faults,
        flow,
      });
      const restSignIn = createRestSignIn({ flow, auth });
      // Every access token identity answers for: JWTs, and the provider's opaque ones (its records).
      const accessTokens = createAccessTokenUseCases({
        auth,
        tokens,
        stores,
        uow,
        opaque: opaqueAccessTokens(() => opHost.provider(), config.op.publicUrl),
        opaqueJti: opaqueTokenJti,
      });
      // The token endpoint's writes (one statement per request), and the sessions its tokens name.
      const opWrites = new TokenRequestWrites(dataSource, faults?.afterOpRefreshCommit ? () => faults.afterOpRefreshCommit?.() : undefined);
      const sessions = createSessionUseCases({
        uow,
        stores,
        directory,
        secondFactor,
        endSessionsIn: (tx, userId, at) => auth.endSessionsIn(tx, userId, at),
        opTokens: { record: (uid, token) => opWrites.add(...opTokenWrites(uid, token)) },
        ...(faults?.beforeOpSessionWrite ? { beforeOpSessionWrite: () => faults.beforeOpSessionWrite!() } : {}),
      });
      const emailActions = createEmailActionUseCases({
        settings: {
          sealKey: config.emailActions.sealKey,
          tokenLifetimeSeconds: 3_600,
          perEmailLimit: config.emailActions.perEmailPerHour,
          perEmailWindowSeconds: 3_600,
          resetRemovesFactorsHours: config.auth.resetRemovesFactorsHours,
        },
        uow,
        stores,
        directory,
        logger,
        endSessionsIn: (tx, userId, at) => auth.endSessionsIn(tx, userId, at),
        accepted: () => requests.nudge(),
        metrics: rt.metrics,
      });
      // The provider's client reads kept until a client event (or a write here) changes them.
      const clientCache = config.cache.enabled && !opts.clients ? cachedClients(stores.clients, { ...config.cache, metrics: rt.metrics }) : undefined;
      const clientWrites = createClientUseCases({ uow, clients: stores.clients, directory, endSessionsIn: (tx, subject, at) => auth.endSessionsIn(tx, subject, at) });
      const clientUseCases = clientCache ? invalidatingClientUseCases(clientWrites, clientCache) : clientWrites;
      // Upstream identity providers (issue #40): their secrets sealed under the key-encryption key.
      const kek = new SealingKeys(config.jwt.keyEncryptionKey, config.jwt.previousKeyEncryptionKeys);
      const identityProviders = createIdentityProviderUseCases({ uow, providers: stores.identityProviders, directory, kek });
      const fed = wireFederation({
        publicUrl: config.op.publicUrl,
        prefix: config.op.prefix,
        directoryTarget: config.directoryTarget,
        metrics: rt.metrics,
        signer: { key: rt.callKey, from: 'identity' },
        credentials: rt.grpcClientCredentials,
        uow,
        stores,
        directory,
        kek,
        ...(opts.federationPresets ? { presets: opts.federationPresets } : {}),
      });
      // Accepted email-action requests become tokens and events here (also those a crashed
      // process or another replica left behind). Each accepted request nudges the loop: the poll
      // only finds those, so at rest it wakes every 5 s, not every second (issue #43, idle CPU).
      const requests = new BatchLoop({ name: 'email-action requests', work: (n) => emailActions.processRequests(n), batchSize: 50, pollMs: 5_000, logger });
      requests.start();
      // The OpenID provider on its own port, behind the gateway; its keys are the ring's.
      const op = config.op;
      // Consent events, and issued tokens counted per client per minute (one event each, not one per grant).
      const opAudit = createOpAudit({ uow, logger });
      opAudit.start();
      // The registry's clients (the console's built-in one first), or a test's own.
      const opClients = opts.clients ?? clientCache?.lookup ?? stores.clients;
      // The account's security is managed with first-party tokens (the registry says which clients are).
      const access = createAccountAccess({ clients: opClients });
      const myFactors = createMyFactorUseCases({
        access,
        totp: createTotpSecrets({ totpKeys, issuer: config.jwt.issuer, stores, directory }),
        recoveryKey,
        passkeys,
        uow,
        stores,
        directory,
      });
      const refreshRetry = new RefreshRetry(
        new SealingKeys(config.jwt.keyEncryptionKey, config.jwt.previousKeyEncryptionKeys).map((k) => identityKey(k, 'oidc-refresh-answer')),
        op.refreshRetrySeconds,
        opWrites,
      );
      const opSessionIds = new OpSessionIds((uid) => stores.sessions.opSessionId(uid));
      const opHost = new OpHost(
        () => keys.privateJwks(),
        (jwks) =>
          createProvider(
            {
              issuer: op.publicUrl,
              prefix: op.prefix,
              cookieKeys: op.cookieKeys.map((k) => k.toString('base64url')),
              audience: config.jwt.audience,
              alg: config.jwt.alg,
              signingAlgs: keys.algorithms,
              accessTokenSeconds: config.jwt.expirySeconds,
              refreshTokenSeconds: config.jwt.refreshExpirySeconds,
              sessionSeconds: op.sessionSeconds,
            },
            // A service account's permissions: those of its roles as the directory holds them now.
            {
              dataSource,
              writes: opWrites,
              refreshRetry,
              clients: opClients,
              principal: (id) => tokenDirectory.principal(id),
              organizations: orgGrants,
              // Without MFA_REQUIRED_ROLES nothing is asked of a session (no principal read per authorization).
              requiredRoles: config.mfa.requiredRoles,
              rolePermissions: async (roles) => [...new Set((await tokenDirectory.resolveRoles(roles)).flatMap((r) => r.permissions))].sort(),
              tokensIssued: (clientId, grantType) => {
                security.tokenGrants.inc({ grant_type: grantLabel(grantType) });
                opAudit.tokensIssued(clientId, grantType);
              },
              sessions: {
                signedIn: async (x) => void (await sessions.startOp(x)),
                touch: (uid) => sessions.touchOp(uid),
                sessionId: (uid) => opSessionIds.get(uid),
                tokenIssued: (uid, record) => sessions.opTokenIssued(uid, record),
                signedOut: async (uid, userId, clientId) => {
                  await (clientId === undefined ? sessions.endOp(uid, userId) : sessions.endOpClient(uid, userId, clientId));
                },
              },
              tokenChecks: accessTokens,
              refreshReused: (accountId, clientId, grantId) =>
                void opAudit.refreshReused(accountId, clientId, grantId).catch((err: unknown) => logger.error({ err, clientId }, 'refresh-token reuse could not be written to the audit outbox')),
              logger,
            },
            opPages(op.prefix),
            jwks,
          ),
        logger,
      );
      await opHost.provider();
      const opServer = await startOpServer(opRequestHandler({
          prefix: op.prefix,
          publicUrl: op.publicUrl,
          provider: () => opHost.provider(),
          flow,
          sessions,
          audit: opAudit,
          permissions: (names) => directory.resolvePermissions(names),
          logger,
          providerLinks: async (base) => (await fed.federation.buttons()).map((b) => ({ displayName: b.displayName, href: `${base}/federation/${b.name}` })),
          federation: federationRoutes({
            prefix: op.prefix,
            accountPath: '/account',
            federation: fed.federation,
            ...federationSignIn({ prefix: op.prefix, flow, sessions, tickets: upstreamTickets, federation: fed.federation }),
          }),
        }), rt.bindHost, op.port);
      logger.info({ port: opServer.port, issuer: op.publicUrl }, 'OpenID provider listening');
      opts.onOpListening?.(opServer.port);
      return {
        grpc: [
          ...identityGrpc(
            { auth, signIn: restSignIn, flow, accessTokens, emailActions, keys, myFactors, access, sessions, granted: (g) => security.tokenGrants.inc({ grant_type: g }), importTotp: createImportTotp({ totpKeys, uow, stores, directory }) },
            { logger: rt.logger, metrics: rt.metrics, service: 'identity', callKey: rt.callKey, peerNames: rt.grpcPeerNames },
          ),
          ...clientsGrpc(clientUseCases, { logger: rt.logger, metrics: rt.metrics, service: 'identity', callKey: rt.callKey, peerNames: rt.grpcPeerNames }),
          ...organizationTokens({ config, rt, grants: orgGrants, stores, principals: tokenDirectory, tokens }),
          ...identityProvidersGrpc(identityProviders, { logger: rt.logger, metrics: rt.metrics, service: 'identity', callKey: rt.callKey, peerNames: rt.grpcPeerNames }),
          ...linkedIdentitiesGrpc(
            { federation: fed.federation, access, validate: (t) => accessTokens.validate(t), administers: (userId) => sessions.assertAdministers(userId) },
            { logger: rt.logger, metrics: rt.metrics, service: 'identity', callKey: rt.callKey, peerNames: rt.grpcPeerNames },
          ),
        ],
        broadcasts: [...(cached ? [cached.broadcast] : []), ...(clientCache ? [clientCache.broadcast] : [])],
        consumers: identityConsumers({ auth, emailActions, endOidcSubject: (userId) => revokeOidcSubject(dataSource, userId) }, logger),
        // Ready only while a signing key is loaded (the database is checked for every service).
        checks: { keys: () => keys.check() },
        housekeeping: async () => {
          await purgeExpired(dataSource, config.auth.lockoutMinutes);
          await purgeExpiredOidc(dataSource);
          await refreshRetry.purge(dataSource);
        },
        stop: async () => {
          await new Promise<void>((resolve) => opServer.server.close(() => resolve()));
          // The last window's counts, before the database closes.
          await opAudit.stop();
          await requests.stop();
          keys.stop();
          directoryClient.close();
          fed.close();
        },
      };
    },
  };
}
