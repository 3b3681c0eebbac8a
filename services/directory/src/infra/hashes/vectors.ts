/**
 * Test vectors re-typed as data from Ory Kratos's comparator tests (hash/hasher_test.go) and
 * ZITADEL passwap's tests (internal/testvalues, phpass, sha2: Drepper's SHA-crypt vectors).
 * Each `hash` verifies with `password`; `wrong` lists hashes that must not verify with it.
 */
export interface Vector {
  readonly family: string;
  readonly source: 'kratos' | 'passwap' | 'drepper' | 'passlib';
  readonly password: string;
  readonly hash: string;
}

export const VECTORS: readonly Vector[] = [
  // bcrypt
  { family: 'bcrypt', source: 'kratos', password: 'test', hash: '$2a$12$o6hx.Wog/wvFSkT/Bp/6DOxCtLRTDj7lm9on9suF/WaCGNVHbkfL6' },
  { family: 'bcrypt', source: 'passwap', password: 'password', hash: '$2a$12$aLYFkieuqJyeynvptPTxpehSViui5WeAPuR2Xw1wui9CPHEaacmFq' },
  { family: 'bcrypt', source: 'passwap', password: 'password', hash: '$2b$12$bIRGj4QPPoSUMWsJE.4Pk.T1qTpDWz7HhMnuiQhGzGinKPsx/HQdq' },
  { family: 'bcrypt', source: 'passwap', password: 'password', hash: '$2y$12$hXUrnqdq1RIIYZ2HPytIIe5lXdIvbhqrTvdPsSF7o.jFh817Z6lwm' },
  // argon2
  { family: 'argon2id', source: 'kratos', password: 'test', hash: '$argon2id$v=19$m=32,t=2,p=4$cm94YnRVOW5jZzFzcVE4bQ$MNzk5BtR2vUhrp6qQEjRNw' },
  { family: 'argon2id', source: 'kratos', password: 'test', hash: '$argon2id$v=19$m=32,t=5,p=4$cm94YnRVOW5jZzFzcVE4bQ$fBxypOL0nP/zdPE71JtAV71i487LbX3fJI5PoTN6Lp4' },
  { family: 'argon2i', source: 'kratos', password: 'test', hash: '$argon2i$v=19$m=65536,t=3,p=4$kk51rW/vxIVCYn+EG4kTSg$NyT88uraJ6im6dyha/M5jhXvpqlEdlS/9fEm7ScMb8c' },
  { family: 'argon2i', source: 'passwap', password: 'password', hash: '$argon2i$v=19$m=4096,t=3,p=1$cmFuZG9tc2FsdGlzaGFyZA$YMvo8AUoNtnKYGqeODruCjHdiEbl1pKL2MsYy9VgU/E' },
  { family: 'argon2d', source: 'passwap', password: 'password', hash: '$argon2d$v=19$m=4096,t=3,p=1$cmFuZG9tc2FsdGlzaGFyZA$CB0Du96aj3fQVcVSqb0LIA6Z6fpStjzjVkaC3RlpK9A' },
  { family: 'argon2id', source: 'passwap', password: 'password', hash: '$argon2id$v=19$m=4096,t=3,p=1$cmFuZG9tc2FsdGlzaGFyZA$DYojYpnUWSMmTtrkVXyaNWVGxLmGe1n8VJBPDdFkbjU' },
  // PBKDF2
  { family: 'pbkdf2-sha256', source: 'kratos', password: 'test', hash: '$pbkdf2-sha256$i=100000,l=32$1jP+5Zxpxgtee/iPxGgOz0RfE9/KJuDElP1ley4VxXc$QJxzfvdbHYBpydCbHoFg3GJEqMFULwskiuqiJctoYpI' },
  { family: 'pbkdf2-sha512', source: 'kratos', password: 'test', hash: '$pbkdf2-sha512$i=100000,l=32$bdHBpn7OWOivJMVJypy2UqR0UnaD5prQXRZevj/05YU$+wArTfv1a+bNGO1iZrmEdVjhA+lL11wF4/IxpgYfPwc' },
  { family: 'pbkdf2-sha1', source: 'passwap', password: 'password', hash: '$pbkdf2$12$cmFuZG9tc2FsdGlzaGFyZA$mwUqsMixIYMc/0eN4v1.l3SVDpk' },
  { family: 'pbkdf2-sha256', source: 'passwap', password: 'password', hash: '$pbkdf2-sha256$12$cmFuZG9tc2FsdGlzaGFyZA$OFvEcLOIPFd/oq8egf10i.qJLI7A8nDjPLnolCWarQY' },
  { family: 'pbkdf2-sha512', source: 'passwap', password: 'password', hash: '$pbkdf2-sha512$12$cmFuZG9tc2FsdGlzaGFyZA$e297piXvkpYxoYQAWD9zn1aKXCo3XmR91Xn9/WEGsHXU/7xaQzCV9upu4T5Jntq6AiZ6YX0diXnY7Ju5TEfUMA' },
  // scrypt (Kratos writes N as ln, passwap and passlib its log2)
  { family: 'scrypt', source: 'kratos', password: 'test', hash: '$scrypt$ln=16384,r=8,p=1$2npRo7P03Mt8keSoMbyD/tKFWyUzjiQf2svUaNDSrhA=$MiCzNcIplSMqSBrm4HckjYqYhaVPPjTARTzwB1cVNYE=' },
  { family: 'scrypt', source: 'passwap', password: 'password', hash: '$scrypt$ln=16,r=8,p=1$cmFuZG9tc2FsdGlzaGFyZA$Rh+NnJNo1I6nRwaNqbDm6kmADswD1+7FTKZ7Ln9D8nQ' },
  // Firebase's modified scrypt
  { family: 'firebase-scrypt', source: 'kratos', password: '8x4WjoDbSxJZdR', hash: '$firescrypt$ln=14,r=8,p=1$sPtDhWcd1MfdAw==$xbSou7FOl6mChCyzpCPIQ7tku7nsQMTFtyOZSXXd7tjBa4NtimOx7v42Gv2SfzPQu1oxM2/k4SsbOu73wlKe1A==$Bw==$YE0dO4bwD4JnJafh6lZZfkp1MtKzuKAXQcDCJNJNyeCHairWHKENOkbh3dzwaCdizzOspwr/FITUVlnOAwPKyw==' },
  { family: 'firebase-scrypt', source: 'passwap', password: 'user1password', hash: '$firebasescrypt$ln=14,r=8$42xEC+ixf3L2lw==$lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==$Bw==$jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==' },
  { family: 'firebase-scrypt', source: 'passwap', password: 'user1password', hash: '$firebasescrypt$ln=14,r=8$42xEC+ixf3L2lw==$NohHtJ2FmkEqzefZ0IHnOlqTzFN8n6vXXd0EW2OIGuUh4rcwvVh7XVRDVs5yOrueoudRPIoimS6jIwf4pMW3rg==$$jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==' },
  // md5-crypt
  { family: 'md5-crypt', source: 'kratos', password: 'test', hash: '$md5-crypt$TVEiiKNb$SN6/pUaRQS/E8Jh46As2C/' },
  { family: 'md5-crypt', source: 'kratos', password: 'test', hash: '$md5-crypt$$whuMjZj.HMFoaTaZRRtkO0' },
  { family: 'md5-crypt', source: 'kratos', password: 'ory', hash: '$md5-crypt$xWMlm2eL$GGTOpgZu4p2k6ORprAu3b.' },
  { family: 'md5-crypt', source: 'passwap', password: 'password', hash: '$1$kJ4QkJaQ$3EbD/pJddrq5HW3mpZ4KZ1' },
  // SHA-crypt
  { family: 'sha256-crypt', source: 'kratos', password: 'test', hash: '$sha256-crypt$rounds=535000$05R.9KB6UC2kLI3w$Q/zslzx./JjkAVPTwp6th7nW5l7JU91Gte/UmIh.U78' },
  { family: 'sha256-crypt', source: 'drepper', password: 'Hello world!', hash: '$5$rounds=5000$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5' },
  { family: 'sha256-crypt', source: 'drepper', password: 'the minimum number is still observed', hash: '$5$rounds=1000$roundstoolow$yfvwcWrQ8l/K0DAWyuPMDNHpIVlTQebY9l/gL972bIC' },
  { family: 'sha512-crypt', source: 'kratos', password: 'ory', hash: '$sha512-crypt$rounds=656000$0baQbxBrfpKqvizk$Q9cYk1MeNAlECPgpG3jjfNI2DumLqd0yHbxzLdxiX6nsSD5i9n0awcbiCf8R5DzpIYxeBPznPcb1wtzlgUKtH0' },
  { family: 'sha512-crypt', source: 'drepper', password: 'Hello world!', hash: '$6$rounds=5000$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1' },
  { family: 'sha512-crypt', source: 'passwap', password: 'password', hash: '$6$rounds=5000$salt$IxDD3jeSOb5eB1CX5LBsqZFVkJdido3OUILO5Ifz5iwMuTS4XMS130MTSuDDl3aCI6WouIL9AjRbLCelDCy.g.' },
  // {SSHA}
  { family: 'ssha-sha1', source: 'kratos', password: 'test123', hash: '{SSHA}JFZFs0oHzxbMwkSJmYVeI8MnTDy/276a' },
  { family: 'ssha-sha256', source: 'kratos', password: 'test123', hash: '{SSHA256}czO44OTV17PcF1cRxWrLZLy9xHd7CWyVYplr1rOhuMlx/7IK' },
  { family: 'ssha-sha512', source: 'kratos', password: 'test123', hash: '{SSHA512}xPUl/px+1cG55rUH4rzcwxdOIPSB2TingLpiJJumN2xyDWN4Ix1WQG3ihnvHaWUE8MYNkvMi5rf0C9NYixHsE6Yh59M=' },
  // salted SHA with a salt layout (pf)
  { family: 'salted-sha1', source: 'kratos', password: 'test', hash: '$sha1$pf=e1NBTFR9e1BBU1NXT1JEfQ==$NW9wbWtnejAzcg==$2qU2SGWP8viTM1md3FiI3+rjWXQ=' },
  { family: 'salted-sha1', source: 'kratos', password: 'BwS^514g^cv@Z', hash: '$sha1$pf=e1NBTFR9e1BBU1NXT1JEfQ==$NW9wbWtnejAzcg==$99h9net4BXl7qdTRaiGUobLROxM=' },
  { family: 'salted-sha1', source: 'kratos', password: 'test', hash: '$sha1$pf=Pz9zdGF0aWNQcmVmaXg/P3tTQUxUfXtQQVNTV09SRH0=$NW9wbWtnejAzcg==$SAAxMUn7jxckQXkBmsVF0nHwqso=' },
  { family: 'salted-sha1', source: 'kratos', password: 'test', hash: '$sha1$pf=e1BBU1NXT1JEfSUle1NBTFR9$NW9wbWtnejAzcg==$YX0AW8/MW5ojUlnzTaR43ucHCog=' },
  { family: 'salted-sha256', source: 'kratos', password: 'test', hash: '$sha256$pf=e1NBTFR9e1BBU1NXT1JEfQ==$NW9wbWtnejAzcg==$0gfRVLCvtBCk20udLDEY5vNhujWx7RGjwRIS1ebMsLY=' },
  { family: 'salted-sha256', source: 'kratos', password: 'test', hash: '$sha256$pf=e1NBTFR9JCR7UEFTU1dPUkR9$NW9wbWtnejAzcg==$HokCOi9OtiZaZRvnkgemV3B4UUHpI7kA8zq/EZWH2NY=' },
  { family: 'salted-sha512', source: 'kratos', password: 'test', hash: '$sha512$pf=e1NBTFR9e1BBU1NXT1JEfQ==$NW9wbWtnejAzcg==$6ctpVuApMNp0CgBXcdHw/GC562eFEFGr4gpgANX8ZYsX+j5B19IkdmOY2Fytsz3QUwSWdGcUjbqwgJGTH0UYvw==' },
  // md5, plain and salted
  { family: 'md5', source: 'kratos', password: 'test', hash: '$md5$CY9rzUYh03PK3k6DJie09g==' },
  { family: 'md5', source: 'kratos', password: 'ory', hash: '$md5$ptoWyof5SobW+pbZu2QXoQ==' },
  { family: 'md5-salted', source: 'kratos', password: 'test', hash: '$md5$pf=e1NBTFR9e1BBU1NXT1JEfQ==$MTIz$q+RdKCgc+ipCAcm5ChQwlQ==' },
  { family: 'md5-salted', source: 'kratos', password: 'ory', hash: '$md5$pf=e1BBU1NXT1JEfXtTQUxUfSQ/$MTIzNDU2Nzg5$8PhwWanVRnpJAFK4NUjR0w==' },
  // HMAC
  { family: 'hmac-md4', source: 'kratos', password: 'test', hash: '$hmac-md4$MWQ5ZTI4Nzc2Zjg4YmE2MTQ5YjQ0OTMyOGE4NWU4YjA=$MTIzNDU=' },
  { family: 'hmac-md5', source: 'kratos', password: 'test', hash: '$hmac-md5$ZmU4Njk3Zjc0MmQwODA0MDVkMTI3MGU2MTYzMzE2Zjk=$MTIzNDU=' },
  { family: 'hmac-sha1', source: 'kratos', password: 'test', hash: '$hmac-sha1$NDMyNjcxZTUyY2Y2YTBmYjZjZDE2NjQxYjAwNjFiZjAwOGEzNWM5MA==$MTIzNDU=' },
  { family: 'hmac-sha224', source: 'kratos', password: 'test', hash: '$hmac-sha224$YmUwYmYzM2EwNGRlNDE0YjQzNjBhNmIyOThmNmIyYzI4OWQyMzk3MDUwZDFjMzliYjVmMDMyOTQ=$MTIzNDU=' },
  { family: 'hmac-sha256', source: 'kratos', password: 'test', hash: '$hmac-sha256$ZTAzMWJhMWMyOTM4YjFkMjgzZjkxOWExZGY5YWM2NmMxOTJhN2RkNzQ0MzJkNWZkNGFkYTI5OTk0MWJhMTA5Zg==$MTIzNDU=' },
  { family: 'hmac-sha384', source: 'kratos', password: 'test', hash: '$hmac-sha384$ZWEyMGM3NGE4Y2UzMTljNTdjZTlhZGQyYTZjNDE0MGQ4YjMwYWIwOWM4OTRiNWQ4MmZjODlhMzBhMmQzNGE5NmQ0NDY1NWRhYjQ2ZjhiYjBkNTRmYjk5YWZkZTA1MGY1$MTIzNDU=' },
  { family: 'hmac-sha512', source: 'kratos', password: 'test', hash: '$hmac-sha512$OTFmODY0ZTI1NmU0ZjVhYjhiMDViZGFmNGVmNGZmMGVlNTY4ODYwNWJhYTk4MTk2OTgyMzc3NzI1YTc4MzcxMTMzNzZmY2YxYTk5MGMxM2RiZDk2MGFmMmQ1YzRmODdlMGMwYTNkYjcyNjY0NjM4NGE4YzQ2MjNhZDZkN2UxZTE=$MTIzNDU=' },
  // phpass (passlib's vectors, as passwap carries them) and Drupal 7
  { family: 'phpass', source: 'passlib', password: 'test12345', hash: '$P$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0' },
  { family: 'phpass', source: 'passlib', password: 'test1', hash: '$H$9aaaaaSXBjgypwqm.JsMssPLiS8YQ00' },
  { family: 'phpass', source: 'passlib', password: 'JohnRipper', hash: '$P$B12345678L6Lpt4BxNotVIMILOa9u81' },
  { family: 'phpass', source: 'passlib', password: '', hash: '$P$7JaFQsPzJSuenezefD/3jHgt5hVfNH0' },
  { family: 'phpass', source: 'passlib', password: 'compL3X!', hash: '$P$FiS0N5L672xzQx1rt1vgdJQRYKnQM9/' },
  { family: 'drupal7', source: 'passwap', password: 'password', hash: '$S$ErandomsaOpYrAZqwxGynirQbWYCb3ejW4BwGH81LJcOzbzeVd02' },
];

/** Values the sources refuse (malformed, truncated, unknown): refused at import here. */
export const MALFORMED: readonly string[] = [
  '$unknown$12$o6hx.Wog/wvFSkT/Bp/6DOxCtLRTDj7lm9on9suF/WaCGNVHbkfL6',
  '$pbkdf2-sha256$1jP+5Zxpxgtee/iPxGgOz0RfE9/KJuDElP1ley4VxXc$QJxzfvdbHYBpydCbHoFg3GJEqMFULwskiuqiJctoYpI',
  '$pbkdf2-sha256$aaaa$1jP+5Zxpxgtee/iPxGgOz0RfE9/KJuDElP1ley4VxXc$QJxzfvdbHYBpydCbHoFg3GJEqMFULwskiuqiJctoYpI',
  '$pbkdf2-sha512$I=100000,l=32$bdHBpn7OWOivJMVJypy2UqR0UnaD5prQXRZevj/05YU$+wArTfv1a+bNGO1iZrmEdVjhA+lL11wF4/IxpgYfPwc',
  '$scrypt$2npRo7P03Mt8keSoMbyD/tKFWyUzjiQf2svUaNDSrhA=$MiCzNcIplSMqSBrm4HckjYqYhaVPPjTARTzwB1cVNYE=',
  '$scrypt$ln=16384,r=8,p=1$(2npRo7P03Mt8keSoMbyD/tKFWyUzjiQf2svUaNDSrhA=$MiCzNcIplSMqSBrm4HckjYqYhaVPPjTARTzwB1cVNYE=',
  '$scrypt$ln=16385,r=8,p=1$2npRo7P03Mt8keSoMbyD/tKFWyUzjiQf2svUaNDSrhA=$MiCzNcIplSMqSBrm4HckjYqYhaVPPjTARTzwB1cVNYE=',
  '$scrypt$ln=abc,r=8,p=1$2npRo7P03Mt8keSoMbyD/tKFWyUzjiQf2svUaNDSrhA=$MiCzNcIplSMqSBrm4HckjYqYhaVPPjTARTzwB1cVNYE=',
  '{SSHA}tooshort',
  '{SSHAnotExistent}xPUl/px+1cG55rUH4rzcwxdOIPSB2TingLpiJJumN2xyDWN4Ix1WQG3ihnvHaWUE8MYNkvMi5rf0C9NYixHsE6Yh59M=',
  '$sha1$pf=e1NBTFR9e1BBU1NXT1JEfQ==$5opmkgz03r$2qU2SGWP8viTM1md3FiI3+rjWXQ=',
  '$sha1$pf=$NW9wbWtnejAzcg==$2qU2SGWP8viTM1md3FiI3+rjWXQ=',
  '$sha1$$NW9wbWtnejAzcg==$2qU2SGWP8viTM1md3FiI3+rjWXQ=',
  '$sha1$NW9wbWtnejAzcg==$2qU2SGWP8viTM1md3FiI3+rjWXQ=',
  '$shaNotExistent$pf=e1NBTFR9e1BBU1NXT1JEfQ==$NW9wbWtnejAzcg==$6ctpVuApMNp0CgBXcdHw/GC562eFEFGr4gpgANX8ZYsX+j5B19IkdmOY2Fytsz3QUwSWdGcUjbqwgJGTH0UYvw==',
  '$md5$$',
  '$md5$$$',
  '$md5$pf=$$',
  '$md5$pf=MTIz$Z$',
  '$md5$pf=MTIz$MTIz$Z',
  '$md5-crypt$$',
  '$md5-crypt$$$',
  '$md5-crypt$whuMjZj.HMFoaTaZRRtkO0',
  '$sha256-crypt$$',
  '$sha256-crypt$$$',
  '$sha512-crypt$$',
  '$hmac-md5$ZmU4Njk3Zjc0MmQwODA0MDVkMTI3MGU2MTYzMzE2Zjk=',
  '$hmac-md5$ZmU4Njk3Zjc0MmQwODA0MDVkMTI3MGU2MTYzMzE2Zjk=$',
  '$hmac-md5$MTIzNDU=',
  '$hmac-md5$$MTIzNDU=',
  '$hmac-md5$',
  '$hmac$ZmU4Njk3Zjc0MmQwODA0MDVkMTI3MGU2MTYzMzE2Zjk=$MTIzNDU=',
  '$hmac-invalid$ZmU4Njk3Zjc0MmQwODA0MDVkMTI3MGU2MTYzMzE2Zjk=$MTIzNDU=',
  '$P$712345678',
  '$X$912345678WhEyvy1YWzT4647jzeOmo0',
  '$P$1IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0',
  '$P$cIQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0',
  '$P$912345678X@badSalt',
  // non-canonical base64 (Kratos: an error)
  '$argon2id$v=19$m=32,t=2,p=4$cm94YnRVOW5jZzFzcVE4bQ$MNzk5BtR2vUhrp6qQEjRN2',
  // truncated
  '$2a$12$o6hx.Wog/wvFSkT/Bp/6DOxCtLRTDj7lm9on9suF/WaCGNVHbkf',
  '$argon2id$v=19$m=32,t=2,p=4$cm94YnRVOW5jZzFzcVE4bQ$',
  '$6$rounds=5000$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl',
  // absurd costs
  '$2a$31$o6hx.Wog/wvFSkT/Bp/6DOxCtLRTDj7lm9on9suF/WaCGNVHbkfL6',
  '$pbkdf2-sha256$i=1000000000,l=32$1jP+5Zxpxgtee/iPxGgOz0RfE9/KJuDElP1ley4VxXc$QJxzfvdbHYBpydCbHoFg3GJEqMFULwskiuqiJctoYpI',
  '$scrypt$ln=30,r=8,p=1$2npRo7P03Mt8keSoMbyD/tKFWyUzjiQf2svUaNDSrhA=$MiCzNcIplSMqSBrm4HckjYqYhaVPPjTARTzwB1cVNYE=',
  '$argon2id$v=19$m=4194304,t=3,p=1$cmFuZG9tc2FsdGlzaGFyZA$DYojYpnUWSMmTtrkVXyaNWVGxLmGe1n8VJBPDdFkbjU',
  '$6$rounds=999999999$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1',
  // control characters
  '$2a$12$o6hx.Wog/wvFSkT/Bp/6DOxCtLRTDj7lm9on9suF/WaCGNVH\u0000fL6',
  '',
  'plaintext-password',
];
