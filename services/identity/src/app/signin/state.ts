/**
 * The state of one sign-in (issue #37 item 1): the account identified, the factors verified with
 * their amr (RFC 8176), the step that comes next, the client and the acr it asked for. A browser
 * sign-in keeps it in the provider's interaction (server side); a REST sign-in in its single-use
 * mfa-token row. Read back only through `readFlowState`: a stored value that does not match the
 * schema is no state at all (the sign-in starts again), never a half-parsed one.
 */
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/**
 * The steps of a sign-in, in order; `enrol` replaces `second_factor` for an account that has none
 * yet; `password_change` comes after the factors of an account that must choose a new password.
 */
export const STEPS = ['identify', 'first_factor', 'second_factor', 'enrol', 'password_change', 'consent', 'done'] as const;
export type Step = (typeof STEPS)[number];

const Method = Type.String({ pattern: '^[a-z][a-z0-9_]{0,31}$' });

export const VerifiedFactor = Type.Object(
  {
    /** The strategy that verified it (its registry name). */
    method: Method,
    /** What it adds to the sign-in's amr. */
    amr: Type.Array(Type.String({ maxLength: 16 }), { maxItems: 4 }),
  },
  { additionalProperties: false },
);

/** The single-use token of the factor step (its hash is the REST row's key). */
export const PendingChallenge = Type.Object(
  {
    mfaToken: Type.String({ pattern: '^[A-Za-z0-9_-]{43}$' }),
    /** The methods the account can answer with (the factor page offers these). */
    methods: Type.Array(Method, { maxItems: 8 }),
  },
  { additionalProperties: false },
);

export const FlowStateSchema = Type.Object(
  {
    v: Type.Literal(1),
    step: Type.Union(STEPS.map((s) => Type.Literal(s))),
    /** The account, once a first factor named it. */
    userId: Type.Optional(Type.String({ maxLength: 64 })),
    factors: Type.Array(VerifiedFactor, { maxItems: 4 }),
    /** The OAuth client of a browser sign-in (absent for REST). */
    clientId: Type.Optional(Type.String({ maxLength: 256 })),
    /** The acr_values the client asked for (a step-up asks for urn:iam:acr:mfa). */
    acrValues: Type.Optional(Type.String({ maxLength: 1024 })),
    challenge: Type.Optional(PendingChallenge),
    /** The first factor said the account must choose a new password (the policy asks it after the factors). */
    passwordChangeRequired: Type.Optional(Type.Boolean()),
    /** The organization the authorization request names (organization-policy.ts): the account must be a member. */
    organization: Type.Optional(
      Type.Object({ id: Type.Optional(Type.String({ maxLength: 36 })), slug: Type.Optional(Type.String({ maxLength: 63 })) }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);

export type FlowState = Static<typeof FlowStateSchema>;
export type VerifiedFactor = Static<typeof VerifiedFactor>;

/** A stored value as a flow state, or null when it is not one (absent, another version, tampered). */
export function readFlowState(stored: unknown): FlowState | null {
  return Value.Check(FlowStateSchema, stored) ? stored : null;
}

/** A new sign-in, at its first step. */
export function newFlowState(opts: { clientId?: string; acrValues?: string; organization?: { id: string } | { slug: string } | null } = {}): FlowState {
  return {
    v: 1,
    step: 'identify',
    factors: [],
    ...(opts.organization ? { organization: { ...opts.organization } } : {}),
    ...(opts.clientId !== undefined ? { clientId: opts.clientId } : {}),
    ...(opts.acrValues !== undefined ? { acrValues: opts.acrValues } : {}),
  };
}

/** The amr of the factors verified so far (RFC 8176, each value once; `mfa` when two or more or a multi-factor one). */
export function amrOf(factors: readonly VerifiedFactor[]): string[] {
  const all = [...new Set(factors.flatMap((f) => f.amr))];
  return factors.length >= 2 && !all.includes('mfa') ? [...all, 'mfa'] : all;
}
