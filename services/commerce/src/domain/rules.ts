/**
 * Input rules of the commerce context, whoever calls it (the gateway checks shapes; these are
 * the domain's own limits). Violations are VALIDATION errors naming the field.
 */
import { AppError, type FieldError, isUuid } from '@iam/platform';
import type { Cursor, Line, OrderStatus, ProductStatus } from './model';

export const PAGE_SIZE_MAX = 100;
export const BATCH_IDS_MAX = 1_000;
export const LINES_MAX = 50;
export const QUANTITY_MAX = 1_000;
/** 10^11 minor units: LINES_MAX × QUANTITY_MAX × PRICE_MAX stays below 2^53. */
export const PRICE_MAX = 100_000_000_000;
export const ON_HAND_MAX = 1_000_000_000;
export const SKU_MAX_LENGTH = 64;
export const NAME_MAX_LENGTH = 200;
export const DESCRIPTION_MAX_LENGTH = 2_000;
export const Q_MAX_LENGTH = 200;
export const IDEMPOTENCY_KEY_MAX_LENGTH = 200;
export const EMAIL_MAX_LENGTH = 254;

const SKU_RE = /^[A-Z0-9][A-Z0-9._-]*$/;
const CURRENCY_RE = /^[A-Z]{3}$/;
/** Printable ASCII, no spaces at the ends (what an Idempotency-Key header can carry). */
const KEY_RE = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/;
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f]/;
// eslint-disable-next-line no-control-regex -- as CONTROL_RE, but tabs and line breaks are text
const MULTILINE_CONTROL_RE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
const BIDI_OR_LONE_SURROGATE_RE = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\p{Cs}\ufffd]/u;
const EMAIL_RE = /^[^\s@"(),:;<>[\]\\]+@[^\s@"(),:;<>[\]\\]+\.[^\s@"(),:;<>[\]\\]{2,}$/;

export class Violations {
  private readonly list: FieldError[] = [];

  add(field: string, message: string): void {
    this.list.push({ field, message });
  }

  get any(): boolean {
    return this.list.length > 0;
  }

  throwIfAny(detail = 'The request is not valid.'): void {
    if (this.list.length > 0) throw AppError.validation(detail, this.list);
  }
}

/** Ids are validated before any query: a malformed one is 400, never a database error. */
export function checkId(id: string, field = 'id'): string {
  if (!isUuid(id)) throw AppError.validation(`The ${field} is not a UUID.`, [{ field, message: 'must be a UUID' }]);
  return id.toLowerCase();
}

export function checkPageSize(v: Violations, pageSize: number): number {
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > PAGE_SIZE_MAX) v.add('pageSize', `must be an integer from 1 to ${PAGE_SIZE_MAX}`);
  return pageSize;
}

/** A page token is base64url(JSON {t: created_at in µs, i: id}); anything else is VALIDATION. */
export function encodePageToken(c: Cursor): string {
  return Buffer.from(JSON.stringify({ t: c.createdUs, i: c.id })).toString('base64url');
}

export function decodePageToken(v: Violations, token: string): Cursor | undefined {
  if (token === '') return undefined;
  const bad = (): undefined => (v.add('pageToken', 'is not a page token from a previous response'), undefined);
  if (token.length > 200 || !/^[A-Za-z0-9_-]+$/.test(token)) return bad();
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null) return bad();
    const { t, i } = parsed as { t?: unknown; i?: unknown };
    if (typeof t !== 'string' || !/^[0-9]{1,17}$/.test(t) || typeof i !== 'string' || !isUuid(i)) return bad();
    return { createdUs: t, id: i.toLowerCase() };
  } catch {
    return bad();
  }
}

export function checkSearch(v: Violations, q: string): string | undefined {
  if (q.length > Q_MAX_LENGTH) v.add('q', `must be at most ${Q_MAX_LENGTH} characters`);
  if (q.includes('\u0000')) v.add('q', 'must not contain NUL characters');
  const text = q.trim();
  return text.length > 0 ? text : undefined;
}

/** Upper-cased; letters, digits, '.', '_' and '-', starting with a letter or digit. */
export function checkSku(v: Violations, field: string, sku: string): string {
  const s = sku.trim().toUpperCase();
  if (s.length === 0 || s.length > SKU_MAX_LENGTH || !SKU_RE.test(s)) {
    v.add(field, `must be 1 to ${SKU_MAX_LENGTH} letters, digits, '.', '_' or '-', starting with a letter or digit`);
  }
  return s;
}

export function checkText(v: Violations, field: string, value: string, opts: { max: number; required: boolean; multiline?: boolean }): string {
  const s = value.trim();
  if (opts.required && s.length === 0) v.add(field, 'must not be empty');
  else if (s.length > opts.max) v.add(field, `must be at most ${opts.max} characters`);
  else if ((opts.multiline ? MULTILINE_CONTROL_RE : CONTROL_RE).test(s)) v.add(field, 'must not contain control characters');
  else if (BIDI_OR_LONE_SURROGATE_RE.test(s)) v.add(field, 'must not contain bidirectional controls or lone surrogates');
  return s;
}

export function checkPrice(v: Violations, field: string, price: number): number {
  if (!Number.isSafeInteger(price) || price < 0 || price > PRICE_MAX) v.add(field, `must be a whole number of minor units from 0 to ${PRICE_MAX}`);
  return price;
}

export function checkCurrency(v: Violations, field: string, currency: string): string {
  if (!CURRENCY_RE.test(currency)) v.add(field, 'must be an ISO 4217 code of 3 upper-case letters');
  return currency;
}

export function checkOnHand(v: Violations, field: string, onHand: number): number {
  if (!Number.isSafeInteger(onHand) || onHand < 0 || onHand > ON_HAND_MAX) v.add(field, `must be a whole number from 0 to ${ON_HAND_MAX}`);
  return onHand;
}

export function checkDelta(v: Violations, field: string, delta: number): number {
  if (!Number.isSafeInteger(delta) || Math.abs(delta) > ON_HAND_MAX || delta === 0) v.add(field, `must be a non-zero whole number from -${ON_HAND_MAX} to ${ON_HAND_MAX}`);
  return delta;
}

export function checkProductStatus(v: Violations, field: string, status: string | undefined): ProductStatus | undefined {
  if (status === undefined) return undefined;
  if (status !== 'ACTIVE' && status !== 'ARCHIVED') v.add(field, 'must be ACTIVE or ARCHIVED');
  return status as ProductStatus;
}

export function checkOrderStatus(v: Violations, field: string, status: string | undefined): OrderStatus | undefined {
  if (status === undefined) return undefined;
  if (!['PENDING', 'CONFIRMED', 'CANCELLED'].includes(status)) v.add(field, 'must be PENDING, CONFIRMED or CANCELLED');
  return status as OrderStatus;
}

/**
 * Order or cart lines: at most LINES_MAX, each a product id and a quantity 1..QUANTITY_MAX, one
 * line per product. Only productId and quantity are read (a price the client sends is ignored).
 */
export function checkLines(v: Violations, lines: ReadonlyArray<{ productId: string; quantity: number }>): Line[] {
  if (lines.length > LINES_MAX) {
    v.add('lines', `must have at most ${LINES_MAX} lines`);
    return [];
  }
  const seen = new Set<string>();
  return lines.map((l, i) => {
    let productId = l.productId;
    if (!isUuid(productId)) v.add(`lines[${i}].productId`, 'must be a UUID');
    else {
      productId = productId.toLowerCase();
      if (seen.has(productId)) v.add(`lines[${i}].productId`, 'appears in more than one line');
      seen.add(productId);
    }
    if (!Number.isInteger(l.quantity) || l.quantity < 1 || l.quantity > QUANTITY_MAX) v.add(`lines[${i}].quantity`, `must be an integer from 1 to ${QUANTITY_MAX}`);
    return { productId, quantity: l.quantity };
  });
}

export function checkIdempotencyKey(v: Violations, key: string): string {
  if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX_LENGTH || !KEY_RE.test(key)) {
    v.add('idempotencyKey', `must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters`);
  }
  return key;
}

/** Optional: '' stays ''; anything else must look like an address (trimmed, lower-cased). */
export function checkOptionalEmail(v: Violations, field: string, email: string): string {
  const e = email.trim().toLowerCase();
  if (e === '') return '';
  if (e.length > EMAIL_MAX_LENGTH || !EMAIL_RE.test(e) || CONTROL_RE.test(e)) v.add(field, 'must be a valid email address');
  return e;
}
