/**
 * An in-memory ClientStore for use-case tests (the same contract suite as the PostgreSQL store,
 * infra/client-store.contract.ts, passes on it). Not transactional.
 */
import { timingSafeEqual } from 'node:crypto';
import { sha256 } from '@iam/platform';
import type { ClientListQuery, ClientPage, ClientRecord, ClientSettings, ClientStore } from '../domain/clients';
import { matchesSearch } from '../infra/client-store';

interface Stored {
  record: ClientRecord;
  secretHash: Buffer | null;
}

export class MemoryClientStore implements ClientStore {
  private readonly rows = new Map<string, Stored>();
  private clock = 0;

  constructor(private readonly builtIns: readonly ClientRecord[] = []) {}

  /** Strictly increasing times, so the (createdAt, clientId) order is the insertion order. */
  private now(): Date {
    this.clock = Math.max(this.clock + 1, Date.now());
    return new Date(this.clock);
  }

  async find(clientId: string): Promise<ClientRecord | null> {
    return this.get(clientId);
  }

  async verifySecret(clientId: string, secret: string): Promise<boolean> {
    const hash = await this.secretHash(clientId);
    const given = sha256(secret);
    return hash !== null && hash.length === given.length && timingSafeEqual(given, hash);
  }

  async secretHash(clientId: string): Promise<Buffer | null> {
    const s = this.builtIns.some((c) => c.clientId === clientId) ? undefined : this.rows.get(clientId);
    return s && !s.record.deletedAt && s.record.type === 'confidential' ? s.secretHash : null;
  }

  async get(clientId: string, opts: { includeDeleted?: boolean } = {}): Promise<ClientRecord | null> {
    const builtIn = this.builtIns.find((c) => c.clientId === clientId);
    if (builtIn) return builtIn;
    const s = this.rows.get(clientId);
    return s && (opts.includeDeleted || !s.record.deletedAt) ? s.record : null;
  }

  async list(q: ClientListQuery): Promise<ClientPage> {
    const stored = [...this.rows.values()]
      .map((s) => s.record)
      .filter((c) => (q.includeDeleted || !c.deletedAt) && matchesSearch(c, q.q))
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.clientId < b.clientId ? -1 : 1));
    const all = [...this.builtIns.filter((c) => matchesSearch(c, q.q)), ...stored];
    const offset = (q.page - 1) * q.pageSize;
    return { items: all.slice(offset, offset + q.pageSize), totalCount: all.length, totalCountExact: true };
  }

  async insert(c: ClientSettings & { clientId: string; firstParty: boolean; secretHash: Buffer | null }): Promise<ClientRecord> {
    if (this.rows.has(c.clientId) || this.builtIns.some((b) => b.clientId === c.clientId)) throw new Error(`duplicate client id ${c.clientId}`);
    const at = this.now();
    const { secretHash, ...settings } = c;
    const record: ClientRecord = { ...settings, builtIn: false, createdAt: at, updatedAt: at, deletedAt: null, version: 1 };
    this.rows.set(c.clientId, { record, secretHash });
    return record;
  }

  async update(clientId: string, version: number, s: ClientSettings & { secretHash?: Buffer | null }): Promise<ClientRecord | null> {
    const row = this.rows.get(clientId);
    if (!row || row.record.deletedAt || row.record.version !== version) return null;
    const { secretHash, ...settings } = s;
    const record: ClientRecord = { ...row.record, ...settings, updatedAt: this.now(), version: version + 1 };
    this.rows.set(clientId, { record, secretHash: secretHash === undefined ? row.secretHash : secretHash });
    return record;
  }

  async softDelete(clientId: string): Promise<boolean> {
    const row = this.rows.get(clientId);
    if (!row || row.record.deletedAt) return false;
    const at = this.now();
    this.rows.set(clientId, { ...row, record: { ...row.record, deletedAt: at, updatedAt: at, version: row.record.version + 1 } });
    return true;
  }

  async setSecretHash(clientId: string, secretHash: Buffer): Promise<boolean> {
    const row = this.rows.get(clientId);
    if (!row || row.record.deletedAt || row.record.type !== 'confidential') return false;
    this.rows.set(clientId, { secretHash, record: { ...row.record, updatedAt: this.now(), version: row.record.version + 1 } });
    return true;
  }
}
