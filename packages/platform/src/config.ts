/**
 * Typed configuration, parsed once at start from the environment.
 *
 * Every problem is collected and reported at once, each naming its variable; the caller
 * (a composition root) turns a ConfigError into a message on stderr and exit code 2.
 * Nothing else in the code base reads process.env.
 *
 * Any variable NAME may instead be given as NAME_FILE, the path of a file holding its value (a
 * mounted Secret: the chart's `usePasswordFiles`, Docker secrets); the file's text, trimmed, is
 * then read as NAME would be. Setting both is a problem (which one wins would be a guess).
 */
import { readFileSync } from 'node:fs';

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export type Env = Readonly<Record<string, string | undefined>>;

export interface IntOptions {
  default?: number;
  min?: number;
  max?: number;
}

/** Reads variables and records problems instead of throwing, so all of them are reported together. */
export class EnvReader {
  private readonly problems: string[] = [];

  constructor(private readonly env: Env) {}

  /** Text of the files named by `NAME_FILE` variables, read once each. */
  private readonly files = new Map<string, string | undefined>();

  /**
   * The variable as given: NAME's value, else the text of the file NAME_FILE names (trimmed of
   * surrounding whitespace, such as the newline `kubectl create secret --from-file` keeps);
   * undefined when neither is set. A file that cannot be read, or both set, is a problem.
   */
  private given(name: string): string | undefined {
    const direct = this.env[name];
    const path = this.env[`${name}_FILE`]?.trim();
    if (!path) return direct;
    if (direct !== undefined && direct.trim() !== '') {
      const both = `${name}: is set and so is ${name}_FILE: keep one`;
      if (!this.problems.includes(both)) this.problems.push(both);
      return direct;
    }
    if (!this.files.has(name)) {
      let text: string | undefined;
      try {
        text = readFileSync(path, 'utf8').trim();
      } catch {
        this.problems.push(`${name}_FILE: cannot read ${path}`);
      }
      this.files.set(name, text);
    }
    return this.files.get(name);
  }

  private raw(name: string): string | undefined {
    const v = this.given(name);
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  }

  /** The name to report a bad value under: NAME_FILE when the value came from the file. */
  private source(name: string): string {
    return this.env[`${name}_FILE`]?.trim() && !this.env[name]?.trim() ? `${name}_FILE` : name;
  }

  private fail<T>(name: string, message: string, fallback: T): T {
    this.problems.push(`${name}: ${message}`);
    return fallback;
  }

  /** A string; required when no default is given. */
  string(name: string, opts: { default?: string } = {}): string {
    const v = this.raw(name) ?? opts.default;
    return v === undefined ? this.fail(name, 'is required', '') : v;
  }

  optionalString(name: string): string | undefined {
    return this.raw(name);
  }

  int(name: string, opts: IntOptions = {}): number {
    const v = this.raw(name);
    if (v === undefined) {
      return opts.default === undefined ? this.fail(name, 'is required', 0) : opts.default;
    }
    if (!/^-?\d+$/.test(v)) return this.fail(name, `must be an integer (got "${clip(v)}")`, opts.default ?? 0);
    const n = Number(v);
    if (!Number.isSafeInteger(n)) return this.fail(name, `is out of range (got "${clip(v)}")`, opts.default ?? 0);
    if (opts.min !== undefined && n < opts.min) return this.fail(name, `must be ≥ ${opts.min} (got ${n})`, opts.default ?? 0);
    if (opts.max !== undefined && n > opts.max) return this.fail(name, `must be ≤ ${opts.max} (got ${n})`, opts.default ?? 0);
    return n;
  }

  /** A TCP port; 0 is allowed only when `allowZero` (let the OS pick, or "disabled"). */
  port(name: string, opts: { default: number; allowZero?: boolean }): number {
    return this.int(name, { default: opts.default, min: opts.allowZero ? 0 : 1, max: 65535 });
  }

  bool(name: string, opts: { default: boolean }): boolean {
    const v = this.raw(name);
    if (v === undefined) return opts.default;
    const s = v.toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(s)) return true;
    if (['0', 'false', 'no', 'off'].includes(s)) return false;
    return this.fail(name, `must be true or false (got "${clip(v)}")`, opts.default);
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], opts: { default: T }): T {
    const v = this.raw(name);
    if (v === undefined) return opts.default;
    return (allowed as readonly string[]).includes(v)
      ? (v as T)
      : this.fail(name, `must be one of ${allowed.join(', ')} (got "${clip(v)}")`, opts.default);
  }

  /** A comma list whose items come from `allowed`; an empty (but set) value is the empty list. */
  list<T extends string>(name: string, allowed: readonly T[], opts: { default: readonly T[] }): T[] {
    const v = this.given(name);
    if (v === undefined) return [...opts.default];
    const items = v.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
    const bad = items.filter((i) => !(allowed as readonly string[]).includes(i));
    if (bad.length > 0) {
      return this.fail(name, `unknown item(s) ${bad.join(', ')}; allowed: ${allowed.join(', ')}`, [...opts.default]);
    }
    return [...new Set(items)] as T[];
  }

  /** A URL with one of the given protocols (without the colon), or undefined when unset. */
  optionalUrl(name: string, protocols: readonly string[]): string | undefined {
    const v = this.raw(name);
    if (v === undefined) return undefined;
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      return this.fail(name, 'must be a URL', undefined);
    }
    if (!protocols.includes(u.protocol.replace(/:$/, ''))) {
      return this.fail(name, `must use ${protocols.join(' or ')} (got ${u.protocol})`, undefined);
    }
    return v;
  }

  url(name: string, protocols: readonly string[], opts: { default?: string } = {}): string {
    const v = this.optionalUrl(name, protocols) ?? opts.default;
    return v === undefined ? this.fail(name, 'is required', '') : v;
  }

  /** base64 (or base64url) of exactly `bytes` bytes, e.g. an AES-256 key. */
  optionalKey(name: string, bytes: number): Buffer | undefined {
    const v = this.raw(name);
    if (v === undefined) return undefined;
    const buf = Buffer.from(v, v.includes('-') || v.includes('_') ? 'base64url' : 'base64');
    if (buf.length === bytes) return buf;
    const from = this.source(name);
    return this.fail(from, from === name ? `must be base64 of exactly ${bytes} bytes` : `must hold base64 of exactly ${bytes} bytes`, undefined);
  }

  /**
   * A 32-byte secret key: `NAME` (base64), or `NAME_FILE` (a file holding it, e.g. a mounted
   * secret), or `fallback` (e.g. one kept in the all-in-one data directory); when `required`,
   * its absence is a problem.
   */
  key(name: string, opts: { fallback?: () => Buffer; required: boolean }): Buffer | undefined {
    const key = this.optionalKey(name, 32);
    if (key || this.raw(name) !== undefined || this.env[`${name}_FILE`]?.trim()) return key;
    if (opts.fallback) return opts.fallback();
    if (opts.required) this.problem(name, `is required (base64 of 32 random bytes, e.g. \`openssl rand -base64 32\`), or set ${name}_FILE`);
    return undefined;
  }

  /** Records a problem found by a cross-field rule. */
  problem(name: string, message: string): void {
    this.problems.push(`${name}: ${message}`);
  }

  done(): void {
    if (this.problems.length > 0) throw new ConfigError(this.problems);
  }
}

function clip(v: string): string {
  return v.length > 40 ? `${v.slice(0, 40)}…` : v;
}

/** Parses the environment with `build` and returns a deep-frozen object; throws ConfigError listing every problem. */
export function readConfig<T extends object>(env: Env, build: (e: EnvReader) => T): Readonly<T> {
  const reader = new EnvReader(env);
  const value = build(reader);
  reader.done();
  return deepFreeze(value);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Buffer.isBuffer(value) && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}
