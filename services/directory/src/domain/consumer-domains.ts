/**
 * Mail providers anyone can get an address at: no organization may claim one (everyone with a
 * gmail.com address would join it just in time). Shipped with the code; lower-case.
 */
export const CONSUMER_DOMAINS: ReadonlySet<string> = new Set([
  'gmail.com', 'googlemail.com', 'outlook.com', 'hotmail.com', 'hotmail.co.uk', 'hotmail.fr', 'live.com', 'msn.com',
  'yahoo.com', 'yahoo.co.uk', 'yahoo.fr', 'yahoo.co.jp', 'ymail.com', 'rocketmail.com', 'aol.com', 'icloud.com',
  'me.com', 'mac.com', 'proton.me', 'protonmail.com', 'pm.me', 'gmx.com', 'gmx.de', 'gmx.net', 'web.de', 'mail.com',
  'mail.ru', 'yandex.ru', 'yandex.com', 'zoho.com', 'qq.com', '163.com', '126.com', 'naver.com', 'tutanota.com',
  'tuta.io', 'fastmail.com', 'hey.com', 'orange.fr', 'free.fr', 'laposte.net', 't-online.de', 'libero.it', 'seznam.cz',
]);
