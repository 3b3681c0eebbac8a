/**
 * A device in words, from its user agent: "Chrome 131 on Linux", "Firefox 133 on Windows",
 * "curl 8". A dozen patterns of our own rather than a parser library and its database: a session
 * list or an audit entry needs the browser and system, not the exact model, and the full agent is
 * kept beside it. Identity names sessions' devices with it; the console's audit view and the
 * account page read agents with it.
 */
const CLIENTS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bEdg(?:e|A|iOS)?\/(\d+)/, 'Edge'],
  [/\b(?:OPR|Opera)\/(\d+)/, 'Opera'],
  [/\bSamsungBrowser\/(\d+)/, 'Samsung Internet'],
  [/\b(?:Firefox|FxiOS)\/(\d+)/, 'Firefox'],
  [/\bHeadlessChrome\/(\d+)/, 'Headless Chrome'],
  [/\b(?:Chrome|CriOS)\/(\d+)/, 'Chrome'],
  [/\bVersion\/(\d+)(?:\.\d+)*(?: Mobile\/\S+)? Safari\//, 'Safari'],
];
const SYSTEMS: ReadonlyArray<readonly [RegExp, string]> = [
  [/Windows NT/, 'Windows'],
  [/iPhone|iPad|iPod/, 'iOS'],
  [/Mac OS X|Macintosh/, 'macOS'],
  [/Android/, 'Android'],
  [/CrOS/, 'ChromeOS'],
  [/Linux/, 'Linux'],
];

export const UNKNOWN_DEVICE = 'Unknown device';

/** "Chrome 156 on Linux", "curl 8", "node"; the start of anything else; UNKNOWN_DEVICE for none. */
export function deviceOf(ua: string): string {
  if (!ua) return UNKNOWN_DEVICE;
  const system = SYSTEMS.find(([re]) => re.test(ua))?.[1];
  const on = system ? ` on ${system}` : '';
  for (const [re, name] of CLIENTS) {
    const m = re.exec(ua);
    if (m) return `${name} ${m[1]}${on}`;
  }
  // A program: its first product token (curl/8.5.0, python-requests/2.32.3, node).
  const m = /^([A-Za-z][\w.-]*)(?:\/v?(\d+))?/.exec(ua);
  if (m && !ua.startsWith('Mozilla/')) return `${m[1]}${m[2] ? ` ${m[2]}` : ''}${on}`;
  return ua.length > 40 ? `${ua.slice(0, 40)}…` : ua;
}
