/**
 * QR codes as inline SVG (no image request, no canvas, no script), for the authenticator app's key:
 * the provider's enrolment page renders `qrSvg`, the account page draws `qrModules` with React.
 */
import qrcode from 'qrcode-generator';

/** The dark modules as one SVG path, inside a 4-module quiet zone: `size` is the side in modules. */
export interface QrModules {
  readonly size: number;
  readonly path: string;
}

export function qrModules(text: string): QrModules {
  const qr = qrcode(0, 'M');
  qr.addData(text);
  qr.make();
  const n = qr.getModuleCount();
  let path = '';
  for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) if (qr.isDark(r, c)) path += `M${c + 4},${r + 4}h1v1h-1z`;
  return { size: n + 8, path };
}

const escapeAttribute = (v: string): string => v.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The QR code of `text` as SVG markup, labelled for assistive technology (`label` is escaped). */
export function qrSvg(text: string, label: string): string {
  const { size, path } = qrModules(text);
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${size} ${size}" width="${size * 5}" height="${size * 5}" role="img" aria-label="${escapeAttribute(label)}"><rect width="${size}" height="${size}" fill="#fff"/><path d="${path}" fill="#000"/></svg>`;
}
