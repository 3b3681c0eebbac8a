/** A QR code as inline SVG (no image request, no canvas, no script), labelled for assistive technology. */
import { qrModules } from '../qr';

export function QrCode({ text, label }: { text: string; label: string }) {
  const { path, size } = qrModules(text);
  return (
    <svg xmlns="http://www.w3.org/2000/svg" viewBox={`0 0 ${size} ${size}`} width={size * 5} height={size * 5} role="img" aria-label={label}>
      <rect width={size} height={size} fill="#fff" />
      <path d={path} fill="#000" />
    </svg>
  );
}
