/**
 * QR codes for the authenticator app's key: the modules as one SVG path, which the one QrCode
 * component (pages/qr-code.tsx) draws on the provider's enrolment page and the account page.
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
