/** What every SCIM operation acts within: its organization, the authenticated connection, and the stores. */
import type { InTransaction, NewEvent } from '@iam/platform';
import type { Organization } from '../../domain/organizations';
import type { UnitOfWork } from '../../domain/ports';
import type { ScimConnection } from '../../domain/scim';
import { ScimError } from '../../domain/scim-error';
import type { ScimConnectionStores } from '../scim-connections';
import type { ListParams } from './query';
import { etagOf } from './resources';

export interface ScimScope {
  readonly organization: Organization;
  readonly connection: ScimConnection;
  /** https://host/scim/v2/{organizationId}: the base of every `meta.location`. */
  readonly base: string;
}

export type ScimTx = InTransaction<ScimConnectionStores>;

export interface ScimDeps {
  readonly uow: UnitOfWork<ScimConnectionStores>;
  readonly stores: ScimConnectionStores;
}

/** A resource's answer: the JSON document (none for 204), its status, ETag and location. */
export interface ScimResult {
  readonly status: number;
  readonly body?: Record<string, unknown>;
  readonly etag?: string;
  readonly location?: string;
}

/** The operations of a SCIM resource type (Users, Groups), each within its scope's organization. */
export interface ScimResourceType {
  create(scope: ScimScope, body: unknown): Promise<ScimResult>;
  get(scope: ScimScope, id: string, params: ListParams): Promise<ScimResult>;
  replace(scope: ScimScope, id: string, body: unknown, ifMatch?: string): Promise<ScimResult>;
  patch(scope: ScimScope, id: string, body: unknown, ifMatch?: string): Promise<ScimResult>;
  remove(scope: ScimScope, id: string, ifMatch?: string): Promise<ScimResult>;
  list(scope: ScimScope, params: ListParams): Promise<ScimResult>;
}

/** 412 when `If-Match` names another version than the stored one (`*` matches any). */
export function checkIfMatch(ifMatch: string | undefined, version: string): void {
  if (!ifMatch || ifMatch.trim() === '*') return;
  const current = etagOf(version);
  const strip = (t: string) => t.trim().replace(/^W\//, '');
  if (!ifMatch.split(',').some((t) => strip(t) === strip(current))) throw new ScimError(412, 'The resource changed since that version (If-Match).');
}

export type Publish = (events: readonly NewEvent[]) => Promise<void>;
