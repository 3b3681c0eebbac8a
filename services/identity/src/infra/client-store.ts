/**
 * The OAuth client registry in PostgreSQL (`oauth_clients`), with the built-in clients of the
 * configuration in front: found and listed (first, read only), never written. Parameterised SQL.
 */
import { timingSafeEqual } from 'node:crypto';
import { escapeLike, sha256 } from '@iam/platform';
import type { EntityManager } from 'typeorm';
import {
  type ClientListQuery,
  type ClientPage,
  type ClientRecord,
  type ClientSecrets,
  type ClientSettings,
  type ClientStore,
  type ClientType,
  DEFAULT_ID_TOKEN_ALG,
  GRANT_TYPES,
  type GrantType,
  SIGNING_ALGS,
  type SigningAlg,
} from '../domain/clients';

interface ClientRowSql {
  client_id: string;
  name: string;
  type: string;
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  grant_types: string[];
  roles: string[];
  require_par: boolean;
  dpop_bound: boolean;
  api_permissions: string[];
  id_token_signed_response_alg: string;
  userinfo_signed_response_alg: string | null;
  resource_server: boolean;
  first_party: boolean;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  version: number;
}

const COLUMNS = `client_id, name, type, redirect_uris, post_logout_redirect_uris, grant_types, roles, require_par, dpop_bound, api_permissions,
  id_token_signed_response_alg, userinfo_signed_response_alg, resource_server, first_party, created_at, updated_at, deleted_at, version`;

const isGrant = (g: string): g is GrantType => (GRANT_TYPES as readonly string[]).includes(g);
const signingAlg = (a: string | null): SigningAlg | null => (a !== null && (SIGNING_ALGS as readonly string[]).includes(a) ? (a as SigningAlg) : null);

function toRecord(r: ClientRowSql): ClientRecord {
  return {
    clientId: r.client_id,
    name: r.name,
    type: r.type === 'confidential' ? 'confidential' : ('public' satisfies ClientType),
    redirectUris: r.redirect_uris,
    postLogoutRedirectUris: r.post_logout_redirect_uris,
    grantTypes: r.grant_types.filter(isGrant),
    roles: r.roles,
    requirePar: r.require_par,
    dpopBound: r.dpop_bound,
    apiPermissions: r.api_permissions,
    idTokenSignedResponseAlg: signingAlg(r.id_token_signed_response_alg) ?? DEFAULT_ID_TOKEN_ALG,
    userinfoSignedResponseAlg: signingAlg(r.userinfo_signed_response_alg),
    resourceServer: r.resource_server,
    firstParty: r.first_party,
    builtIn: false,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    deletedAt: r.deleted_at,
    version: r.version,
  };
}

/** Compared against when there is no stored hash, so every verification costs the same. */
const NO_HASH = sha256('no client secret');

/** Whether a built-in client matches a list's search text. */
export function matchesSearch(c: ClientRecord, q: string): boolean {
  const t = q.toLowerCase();
  return t === '' || c.name.toLowerCase().includes(t) || c.clientId.toLowerCase().includes(t);
}

/** Whether `secret` hashes to `stored`, in constant time (a missing hash costs the same comparison). */
export function secretMatches(stored: Buffer | null, secret: string): boolean {
  const given = sha256(secret);
  const hash = stored && stored.length === given.length ? stored : null;
  const equal = timingSafeEqual(given, hash ?? NO_HASH);
  return hash !== null && equal;
}

export class PgClientStore implements ClientStore, ClientSecrets {
  constructor(
    private readonly m: EntityManager,
    private readonly builtIns: readonly ClientRecord[],
  ) {}

  private builtIn(clientId: string): ClientRecord | undefined {
    return this.builtIns.find((c) => c.clientId === clientId);
  }

  async find(clientId: string): Promise<ClientRecord | null> {
    return this.get(clientId);
  }

  async verifySecret(clientId: string, secret: string): Promise<boolean> {
    return secretMatches(await this.secretHash(clientId), secret);
  }

  async secretHash(clientId: string): Promise<Buffer | null> {
    if (this.builtIn(clientId)) return null;
    const [row] = await this.m.query<Array<{ secret_hash: Buffer | null }>>(
      `SELECT secret_hash FROM oauth_clients WHERE client_id = $1 AND deleted_at IS NULL AND type = 'confidential'`,
      [clientId],
    );
    return row?.secret_hash ?? null;
  }

  async get(clientId: string, opts: { includeDeleted?: boolean; forUpdate?: boolean } = {}): Promise<ClientRecord | null> {
    const builtIn = this.builtIn(clientId);
    if (builtIn) return builtIn;
    const [row] = await this.m.query<ClientRowSql[]>(
      `SELECT ${COLUMNS} FROM oauth_clients WHERE client_id = $1 ${opts.includeDeleted ? '' : 'AND deleted_at IS NULL'} ${opts.forUpdate ? 'FOR UPDATE' : ''}`,
      [clientId],
    );
    return row ? toRecord(row) : null;
  }

  async list(query: ClientListQuery): Promise<ClientPage> {
    const builtIns = this.builtIns.filter((c) => matchesSearch(c, query.q));
    const params: unknown[] = [];
    const where: string[] = [];
    if (!query.includeDeleted) where.push('deleted_at IS NULL');
    if (query.q) {
      params.push(`%${escapeLike(query.q)}%`);
      where.push(`(name ILIKE $${params.length} ESCAPE '\\' OR client_id ILIKE $${params.length} ESCAPE '\\')`);
    }
    const whereSql = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const [counted] = await this.m.query<[{ n: string }]>(`SELECT count(*) AS n FROM oauth_clients ${whereSql}`, params);
    // Built-ins come first (created at the epoch); the stored rows follow them.
    const offset = (query.page - 1) * query.pageSize;
    const fromBuiltIns = builtIns.slice(offset, offset + query.pageSize);
    const limit = query.pageSize - fromBuiltIns.length;
    const rows =
      limit > 0
        ? await this.m.query<ClientRowSql[]>(
            `SELECT ${COLUMNS} FROM oauth_clients ${whereSql} ORDER BY created_at, client_id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
            [...params, limit, Math.max(0, offset - builtIns.length)],
          )
        : [];
    return { items: [...fromBuiltIns, ...rows.map(toRecord)], totalCount: builtIns.length + Number(counted.n), totalCountExact: true };
  }

  async insert(c: ClientSettings & { clientId: string; firstParty: boolean; secretHash: Buffer | null }): Promise<ClientRecord> {
    const [row] = await this.m.query<ClientRowSql[]>(
      `INSERT INTO oauth_clients (client_id, name, type, secret_hash, redirect_uris, post_logout_redirect_uris, grant_types, roles, require_par, dpop_bound, first_party, api_permissions,
                                  id_token_signed_response_alg, userinfo_signed_response_alg, resource_server)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING ${COLUMNS}`,
      [
        c.clientId,
        c.name,
        c.type,
        c.secretHash,
        c.redirectUris,
        c.postLogoutRedirectUris,
        c.grantTypes,
        c.roles,
        c.requirePar,
        c.dpopBound,
        c.firstParty,
        c.apiPermissions,
        c.idTokenSignedResponseAlg,
        c.userinfoSignedResponseAlg,
        c.resourceServer,
      ],
    );
    return toRecord(row!);
  }

  async update(clientId: string, version: number, s: ClientSettings & { secretHash?: Buffer | null }): Promise<ClientRecord | null> {
    const keepSecret = s.secretHash === undefined;
    const [rows] = await this.m.query<[ClientRowSql[], number]>(
      `UPDATE oauth_clients SET name = $3, type = $4, redirect_uris = $5, post_logout_redirect_uris = $6, grant_types = $7, roles = $8,
              require_par = $9, dpop_bound = $10, secret_hash = CASE WHEN $11 THEN secret_hash ELSE $12::bytea END,
              api_permissions = $13, id_token_signed_response_alg = $14, userinfo_signed_response_alg = $15, resource_server = $16,
              updated_at = now(), version = version + 1
        WHERE client_id = $1 AND version = $2 AND deleted_at IS NULL RETURNING ${COLUMNS}`,
      [
        clientId,
        version,
        s.name,
        s.type,
        s.redirectUris,
        s.postLogoutRedirectUris,
        s.grantTypes,
        s.roles,
        s.requirePar,
        s.dpopBound,
        keepSecret,
        s.secretHash ?? null,
        s.apiPermissions,
        s.idTokenSignedResponseAlg,
        s.userinfoSignedResponseAlg,
        s.resourceServer,
      ],
    );
    const row = rows[0];
    return row ? toRecord(row) : null;
  }

  async softDelete(clientId: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>(
      'UPDATE oauth_clients SET deleted_at = now(), updated_at = now(), version = version + 1 WHERE client_id = $1 AND deleted_at IS NULL',
      [clientId],
    );
    return n > 0;
  }

  async setSecretHash(clientId: string, secretHash: Buffer): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>(
      `UPDATE oauth_clients SET secret_hash = $2, updated_at = now(), version = version + 1
        WHERE client_id = $1 AND deleted_at IS NULL AND type = 'confidential'`,
      [clientId, secretHash],
    );
    return n > 0;
  }
}
