/**
 * The account page's sections, in the order shown. A section is one file in this folder: its
 * component gets the signed-in person's record and renders the section's body (the page gives it
 * its landmark, heading and in-page link). To add one (second factors, passkeys), write
 * `XSection.tsx` and add a line here.
 */
import type { ComponentType } from 'react';
import type { Me } from './api';
import { EmailSection } from './EmailSection';
import { FactorsSection } from './FactorsSection';
import { IdentitiesSection } from './IdentitiesSection';
import { PasskeysSection } from './PasskeysSection';
import { PasswordSection } from './PasswordSection';
import { ProfileSection } from './ProfileSection';
import { SessionsSection } from './SessionsSection';

export interface SectionProps {
  /** The person's record (GET /api/v1/me), fresh after each change. */
  readonly me: Me;
}

export interface AccountSection {
  /** The fragment of the in-page link (`/account#password`). */
  readonly id: string;
  readonly title: string;
  readonly Component: ComponentType<SectionProps>;
}

export const SECTIONS: readonly AccountSection[] = [
  { id: 'profile', title: 'Profile', Component: ProfileSection },
  { id: 'email', title: 'Email address', Component: EmailSection },
  { id: 'password', title: 'Password', Component: PasswordSection },
  { id: 'second-factors', title: 'Second factors', Component: FactorsSection },
  { id: 'passkeys', title: 'Passkeys', Component: PasskeysSection },
  { id: 'other-sign-ins', title: 'Other sign-ins', Component: IdentitiesSection },
  { id: 'sessions', title: 'Sessions', Component: SessionsSection },
];
