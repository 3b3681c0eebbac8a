/**
 * Public webhook types of identity's federation (issue #40): an upstream identity linked to or
 * unlinked from a user. The identity is named by its provider, issuer and subject (what it is keyed
 * on); never a token or an email.
 */
import { SUBJECTS, decodeEvent } from '../events';
import { obj, str, uuid } from './schema';
import type { CatalogEntry } from './types';

const LINK = {
  userId: uuid('The user'),
  providerId: uuid('The identity provider (GET /api/v1/identity-providers/{id})'),
  provider: str("The provider's name"),
  issuer: str("The upstream's issuer"),
  subject: str('The subject at the upstream (as the provider maps it)'),
  how: str('linked: auto-link | re-authenticated | sign-up | account; unlinked: account | administrator'),
};

const example = {
  userId: '5b0e2c51-3c55-4c3e-9b5e-3f7f2f6a8c11',
  providerId: '0b7f2f3e-8d47-4a4c-9a43-6c8f7c1f0a01',
  provider: 'google',
  issuer: 'https://accounts.google.com',
  subject: '110248495921238986420',
};

function linkEntry(type: string, subject: typeof SUBJECTS.federatedIdentityLinked, description: string, how: string): CatalogEntry {
  return {
    type,
    version: 1,
    description,
    subject,
    schema: obj(LINK),
    example: { ...example, how },
    toData: (p) => {
      const e = decodeEvent(subject, p);
      return { userId: e.userId, providerId: e.providerId, provider: e.providerName, issuer: e.issuer, subject: e.subject, how: e.how };
    },
  };
}

export const FEDERATION_TYPES: readonly CatalogEntry[] = [
  linkEntry('identity.linked', SUBJECTS.federatedIdentityLinked, 'A sign-in with another identity provider was linked to a user (at sign-up, automatically, after the user proved the account, or from the account page).', 'account'),
  linkEntry('identity.unlinked', SUBJECTS.federatedIdentityUnlinked as typeof SUBJECTS.federatedIdentityLinked, "A sign-in with another identity provider was unlinked from a user (by the user, or an administrator).", 'account'),
];
