import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useEffect, useState } from 'react';
import { mailbox } from './api/resources';
import { type Start, signOut, startFailure, startUp } from './auth/oidc';
import { ADMINISTRATOR, type Session, can, isAdministrator, onSession, session } from './auth/session';
import { BASE, Link, useFocusHeading, usePath } from './router';
import { NoPermission } from './components/ui';
import { AuditPage } from './pages/Audit';
import { ClientPage, ClientsPage } from './pages/Clients';
import { IdentityProviderPage, IdentityProvidersPage } from './pages/IdentityProviders';
import { MailPage, MailboxPage } from './pages/Mailbox';
import { MePage } from './pages/Me';
import { OrganizationPage, OrganizationsPage } from './pages/Organizations';
import { PermissionsPage } from './pages/Permissions';
import { ProductCreatePage, ProductPage, ProductsPage } from './pages/Products';
import { RolePage, RolesPage } from './pages/Roles';
import { SignIn } from './pages/SignIn';
import { UserCreatePage, UserEditPage, UsersPage } from './pages/Users';
import { WebhookPage } from './pages/Webhook';
import { WebhooksPage } from './pages/Webhooks';

/**
 * Every page: its section (the first part of the path), whether it takes the rest of the path
 * (`new` or an id), its title and the permission it needs (none: anyone signed in; `Administrator`:
 * the role itself, which no permission stands in for). The nav
 * shows the sections whose list page the token's permissions allow; a page the caller may not
 * use (a direct URL) shows its title and one message, and calls nothing.
 */
interface Route {
  readonly section: string;
  readonly sub?: 'new' | 'id';
  readonly title: string;
  readonly permission?: string;
  readonly render: (id: string, path: string) => ReactNode;
}
const ROUTES: readonly Route[] = [
  { section: 'users', sub: 'new', title: 'Create user', permission: 'users.manage', render: () => <UserCreatePage /> },
  { section: 'users', sub: 'id', title: 'Edit user', permission: 'users.manage', render: (id) => <UserEditPage id={id} /> },
  { section: 'users', title: 'Users', permission: 'users.manage', render: (_id, path) => <UsersPage key={path} /> },
  { section: 'roles', sub: 'id', title: 'Role', permission: 'roles.manage', render: (id) => <RolePage id={id} /> },
  { section: 'roles', title: 'Roles', permission: 'roles.manage', render: () => <RolesPage /> },
  { section: 'permissions', title: 'Permissions', permission: 'permissions.manage', render: () => <PermissionsPage /> },
  { section: 'products', sub: 'new', title: 'Create product', permission: 'products.manage', render: () => <ProductCreatePage /> },
  { section: 'products', sub: 'id', title: 'Product', permission: 'products.manage', render: (id) => <ProductPage id={id} /> },
  { section: 'products', title: 'Products', render: () => <ProductsPage /> },
  { section: 'clients', sub: 'id', title: 'Client', permission: 'clients.manage', render: (id) => <ClientPage id={id} /> },
  { section: 'clients', title: 'OAuth clients', permission: 'clients.manage', render: () => <ClientsPage /> },
  { section: 'identity-providers', sub: 'id', title: 'Identity provider', permission: 'identity-providers.manage', render: (id) => <IdentityProviderPage id={id} /> },
  { section: 'identity-providers', title: 'Identity providers', permission: 'identity-providers.manage', render: () => <IdentityProvidersPage /> },
  { section: 'webhooks', sub: 'id', title: 'Webhook endpoint', permission: 'webhooks.manage', render: (id) => <WebhookPage id={id} /> },
  { section: 'webhooks', title: 'Webhooks', permission: 'webhooks.manage', render: () => <WebhooksPage /> },
  // Anyone signed in: the API shows the platform every organization, an organization's admins theirs.
  { section: 'organizations', sub: 'id', title: 'Organization', render: (id) => <OrganizationPage id={id} /> },
  { section: 'organizations', title: 'Organizations', render: () => <OrganizationsPage /> },
  { section: 'audit', title: 'Audit trail', permission: 'audit.read', render: (_id, path) => <AuditPage key={path} /> },
  { section: 'mailbox', sub: 'id', title: 'Mail', permission: ADMINISTRATOR, render: (id) => <MailPage id={id} /> },
  { section: 'mailbox', title: 'Mailbox (development)', permission: ADMINISTRATOR, render: () => <MailboxPage /> },
  { section: 'me', title: 'My account', render: () => <MePage /> },
];

const NAV = [
  ['users', 'Users'],
  ['roles', 'Roles'],
  ['permissions', 'Permissions'],
  ['products', 'Products'],
  ['clients', 'Clients'],
  ['identity-providers', 'Identity providers'],
  ['webhooks', 'Webhooks'],
  ['organizations', 'Organizations'],
  ['audit', 'Audit'],
  ['mailbox', 'Mailbox (development)'],
  ['me', 'My account'],
] as const;

const allowed = (r: Route | undefined) => !r?.permission || (r.permission === ADMINISTRATOR ? isAdministrator() : can(r.permission));
const listOf = (section: string) => ROUTES.find((r) => r.section === section && !r.sub);

/**
 * The sections this session may open, in the nav's order. The development mailbox only where the
 * gateway has one (make run without SMTP_URL): its list answers; elsewhere the route is a 404.
 */
const sections = (withMailbox = false) => NAV.filter(([section]) => allowed(listOf(section)) && (section !== 'mailbox' || withMailbox));

/** Whether the gateway has a development mailbox (asked once per session, by administrators). */
function useMailboxExists(signedIn: boolean): boolean {
  const probe = useQuery({ queryKey: mailbox.key, queryFn: mailbox.list, enabled: signedIn && isAdministrator(), retry: false, staleTime: Infinity });
  return probe.isSuccess;
}

function Page({ path }: { path: string }) {
  const [, part = '', id = ''] = path.split('?')[0]!.split('/');
  // The start page: the first section the caller may open (My account at worst).
  const section = part || sections()[0]![0];
  const route = ROUTES.find((r) => r.section === section && (r.sub === 'new' ? id === 'new' : r.sub === 'id' ? id !== '' : id === ''));
  if (!route) return <><h1 tabIndex={-1}>Not found</h1><p>There is no such page. <Link to="/">Go to the start page</Link>.</p></>;
  if (!allowed(route)) return <><h1 tabIndex={-1}>{route.title}</h1><NoPermission permission={route.permission!} /></>;
  return <>{route.render(id, path)}</>;
}

/** The console's redirect URI at the OpenID provider (the built-in client iam-console), and where sign-out returns. */
const REDIRECT_URI = `${window.location.origin}${BASE}/`;

/** The start-up check, once per page load (StrictMode mounts twice in development). */
let starting: Promise<Start> | undefined;

export function App() {
  const qc = useQueryClient();
  const [s, setS] = useState<Session | null>(session());
  const [start, setStart] = useState<Start>();
  const [reason, setReason] = useState<string | undefined>();
  const path = usePath();
  useEffect(() => onSession((next, why) => { setS(next); setReason(why); if (!next) qc.clear(); }), [qc]);
  useEffect(() => {
    starting ??= startUp(REDIRECT_URI).catch((err: unknown): Start => ({ kind: 'signed-out', message: startFailure(err, `${BASE}/`) }));
    void starting.then(setStart);
  }, []);
  useFocusHeading(s ? path : start?.kind ?? 'starting');
  const withMailbox = useMailboxExists(!!s);
  if (!s) {
    if (!start || start.kind === 'redirecting') return <main id="main" className="signin"><p role="status">Signing in…</p></main>;
    return <SignIn reason={reason ?? (start.kind === 'signed-out' ? start.message : undefined)} redirectUri={REDIRECT_URI} />;
  }
  const nav = sections(withMailbox);
  const current = path.split(/[/?]/)[1] || nav[0]![0];
  return (
    <>
      <a href="#main" className="skip">Skip to content</a>
      <header>
        <span className="brand">IAM console</span>
        <nav aria-label="Main">
          <ul>
            {nav.map(([section, label]) => (
              <li key={section}><Link to={`/${section}`} aria-current={section === current ? 'page' : undefined}>{label}</Link></li>
            ))}
          </ul>
        </nav>
        <span className="who">{s.claims.email}</span>
        <button type="button" onClick={() => void signOut(REDIRECT_URI)}>Sign out</button>
      </header>
      <main id="main"><Page path={path} /></main>
    </>
  );
}
