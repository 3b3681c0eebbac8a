/** A factor change refused for an old sign-in (403 reauthentication-required) says what to do; any other problem as usual. */
import { ProblemAlert } from '../components/ui';
import { needsReauthentication } from './factors-api';

export function Reauthenticate({ error }: { error: unknown }) {
  if (!needsReauthentication(error)) return <ProblemAlert error={error} />;
  return (
    <div className="problem" role="alert">
      <p>For your security this needs a recent sign-in. Sign out and sign in again, then retry within five minutes.</p>
    </div>
  );
}
