import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { auth } from './api/resources';
import { type Session, endSession, onSession, session } from './auth/session';
import { Link, navigate, useFocusHeading, usePath } from './router';
import { AuditPage } from './pages/Audit';
import { MePage } from './pages/Me';
import { ProductCreatePage, ProductPage, ProductsPage } from './pages/Products';
import { PermissionsPage, RolePage, RolesPage } from './pages/Roles';
import { SignIn } from './pages/SignIn';
import { UserCreatePage, UserEditPage, UsersPage } from './pages/Users';

function Page({ path }: { path: string }) {
  const [, section, id] = path.split('?')[0]!.split('/');
  if (section === 'users' && id === 'new') return <UserCreatePage />;
  if (section === 'users' && id) return <UserEditPage id={id} />;
  if (section === 'roles' && id) return <RolePage id={id} />;
  if (section === 'roles') return <RolesPage />;
  if (section === 'permissions') return <PermissionsPage />;
  if (section === 'products' && id === 'new') return <ProductCreatePage />;
  if (section === 'products' && id) return <ProductPage id={id} />;
  if (section === 'products') return <ProductsPage />;
  if (section === 'audit') return <AuditPage key={path} />;
  if (section === 'me') return <MePage />;
  return <UsersPage />;
}

const NAV = [
  ['/users', 'Users'],
  ['/roles', 'Roles'],
  ['/permissions', 'Permissions'],
  ['/products', 'Products'],
  ['/audit', 'Audit'],
  ['/me', 'My account'],
] as const;

export function App() {
  const qc = useQueryClient();
  const [s, setS] = useState<Session | null>(session());
  const [reason, setReason] = useState<string | undefined>();
  const path = usePath();
  useEffect(() => onSession((next, why) => { setS(next); setReason(why); if (!next) qc.clear(); }), [qc]);
  useFocusHeading(s ? path : 'signin');
  if (!s) return <SignIn reason={reason} />;
  const signOut = async () => {
    try { await auth.revoke(); } catch { /* the session ends either way */ }
    endSession('You have signed out.');
    navigate('/');
  };
  return (
    <>
      <a href="#main" className="skip">Skip to content</a>
      <header>
        <span className="brand">IAM console</span>
        <nav aria-label="Main">
          <ul>
            {NAV.map(([to, label]) => (
              <li key={to}><Link to={to} aria-current={path.startsWith(to) || (to === '/users' && path === '/') ? 'page' : undefined}>{label}</Link></li>
            ))}
          </ul>
        </nav>
        <span className="who">{s.claims.email}</span>
        <button type="button" onClick={() => void signOut()}>Sign out</button>
      </header>
      <main id="main"><Page path={path} /></main>
    </>
  );
}
