/** RFC 4648 base32 decoding (the secret an authenticator app's enrolment shows), for the tests that compute its codes: the platform's, failing on what is not base32. */
import { base32Decode as decode } from '@iam/platform';

export function base32Decode(s: string): Buffer {
  const bytes = decode(s);
  if (!bytes) throw new Error(`not base32: ${s}`);
  return bytes;
}
