/**
 * A page that only says something: an error, a sign-out done, a device connected. With `link`, it
 * leads on (back to the sign-in an error left, to the reset request).
 */
import { Document } from './frame';

export interface MessagePageProps {
  readonly prefix: string;
  readonly title: string;
  readonly message: string;
  readonly link?: { readonly href: string; readonly text: string };
}

export function MessagePage(p: MessagePageProps) {
  return (
    <Document prefix={p.prefix} title={p.title}>
      <h1>{p.title}</h1>
      <p>{p.message}</p>
      {p.link ? (
        <p>
          <a href={p.link.href}>{p.link.text}</a>
        </p>
      ) : null}
    </Document>
  );
}
