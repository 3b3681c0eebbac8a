/** A QR code as inline SVG (no image request, no canvas), labelled for assistive technology: the hosted pages' encoder (@iam/hosted-pages). */
import { qrModules } from '@iam/hosted-pages';
import { useMemo } from 'react';

export function QrCode({ text, label }: { text: string; label: string }) {
  const { path, size } = useMemo(() => qrModules(text), [text]);
  return (
    <svg xmlns="http://www.w3.org/2000/svg" viewBox={`0 0 ${size} ${size}`} width={size * 5} height={size * 5} role="img" aria-label={label}>
      <rect width={size} height={size} fill="#fff" />
      <path d={path} fill="#000" />
    </svg>
  );
}
