/**
 * The provider's sessions in identity's sessions list, written before the answer that depends on
 * them leaves (DESIGN §5 "Sessions"; issue #35 item 4).
 *
 * Sign-in: the authorization that ends a sign-in writes identity's session row before its
 * redirect (and the code in it) leaves. It was fire-and-forget, so a fast code exchange could
 * overtake it (about 1 in 100–200 sign-ins): its API token then had no `sid`, was recorded under
 * no session, and outlived the session's end. When the write fails, no code leaves: the answer is
 * a 503 page and the library's session is dropped, so the next attempt signs in (and writes) again.
 *
 * The writes are app/sessions.ts's use cases (`startOp`, `touchOp`, `endOp`, `endOpClient`,
 * wired as OpSessionHooks in service.ts); this listener only waits for them. An authorization of
 * a session already signed in marks it used, also before its answer leaves (a failure there only
 * loses "last used", so it is logged, not answered 503).
 *
 * RP-initiated logout: when the user signs out of the provider's session, identity's session ends
 * with it, before the answer leaves, and the access tokens it issued stop at every gateway (as
 * when the session is ended from the sessions list). When the user signs only the asking client
 * out ("Stay signed in"), the session goes on and the tokens it issued to that client stop. The
 * library has revoked the grants that do not outlive a logout; an offline grant's refresh token
 * keeps working. When that write fails (the database is away), the redirect still leaves (the
 * library has ended its session). A whole session's end is retried in the background, for as
 * long as the tokens it would stop can live (an ended session records no later token). A
 * client's sign-out is not: a retry would also stop the tokens the app got after it, and the
 * ones it missed expire within the access tokens' lifetime.
 */
import type { KoaContextWithOIDC } from 'oidc-provider';
import { type Logger, outsideQueryDeadline, retryAfterFailure } from '@iam/platform';
import type { OpSessionHooks, Provider } from './provider';

export interface SessionEventSettings {
  readonly accessTokenSeconds: number;
  readonly sessionSeconds: number;
}

/** What the provider's outer middleware waits for before a (non-token) answer leaves. */
export interface SessionEvents {
  /**
   * Waits for the session writes the request started; when a sign-in's could not be written, the
   * answer becomes `unavailable`'s (no code leaves without its session).
   */
  settle(ctx: object, unavailable: (err: unknown) => void): Promise<void>;
}

/** Listens to the provider's sign-in, authorization and logout events (nothing when `hooks` is absent). */
export function sessionEvents(provider: Provider, hooks: OpSessionHooks | undefined, s: SessionEventSettings, logger: Logger): SessionEvents {
  const signingIn = new WeakMap<object, Promise<void>>();
  const signingOut = new WeakMap<object, Promise<void>>();
  const touching = new WeakMap<object, Promise<void>>();
  if (hooks) {
    provider.on('authorization.success', (ctx: KoaContextWithOIDC) => {
      const session = ctx.oidc.session;
      if (!session?.uid || !session.accountId) return;
      if (!ctx.oidc.result?.login) {
        // Waited for before the answer leaves (not fire-and-forget); a failure only loses "last used".
        touching.set(
          ctx,
          hooks.touch(session.uid).then(
            () => undefined,
            (err: unknown) => logger.error({ err }, 'OpenID provider session record failed'),
          ),
        );
        return;
      }
      signingIn.set(
        ctx,
        hooks.signedIn({
          opSessionUid: session.uid,
          userId: session.accountId,
          amr: session.amr ?? [],
          authTime: new Date((session.loginTs ?? Math.floor(Date.now() / 1000)) * 1000),
          userAgent: (ctx.get('user-agent') ?? '').slice(0, 512),
          ip: ctx.ip ?? '',
          expiresAt: new Date(Date.now() + s.sessionSeconds * 1000),
        }),
      );
    });
    provider.on('end_session.success', (ctx: KoaContextWithOIDC) => {
      const uid = ctx.oidc.session?.uid;
      const accountId = ctx.oidc.session?.accountId;
      if (!uid || !accountId) return;
      const everywhere = ctx.oidc.params?.logout !== undefined;
      const clientId = ctx.oidc.client?.clientId;
      if (!everywhere && !clientId) return;
      const end = () => hooks.signedOut(uid, accountId, everywhere ? undefined : clientId);
      signingOut.set(
        ctx,
        end().catch((err: unknown) => {
          logger.error({ err, retrying: everywhere }, 'ending the session of a provider logout failed');
          // In the background, past the request's deadline (api/op/http.ts).
          if (everywhere) void outsideQueryDeadline(() => retryAfterFailure(end, err, { forMs: s.accessTokenSeconds * 1000, logger, what: 'ending the session of a provider logout' }));
        }),
      );
    });
  }
  return {
    async settle(ctx, unavailable) {
      await signingOut.get(ctx);
      await touching.get(ctx);
      const signIn = signingIn.get(ctx);
      if (!signIn) return;
      try {
        await signIn;
      } catch (err) {
        logger.error({ err }, 'OpenID provider session record failed: the sign-in answers 503');
        const session = 'oidc' in ctx ? (ctx as KoaContextWithOIDC).oidc.session : undefined;
        await session?.destroy().catch(() => undefined);
        unavailable(err);
      }
    },
  };
}
