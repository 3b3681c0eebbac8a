/**
 * The records of a bulk import file, read from a stream with memory bounded by one record: NDJSON
 * (one JSON value a line; blank lines skipped but counted) or one JSON array (its elements,
 * numbered from 1). A record that cannot be read (longer than `maxBytes`, not UTF-8, the array
 * broken off) comes as `{line, error}` and reading goes on where it can. The gateway's import
 * route and the directory's `--import` CLI share it; the directory checks what the text says.
 */
export type ImportFileRecord = { readonly line: number; readonly text: string } | { readonly line: number; readonly error: string };

export type ImportFormat = 'ndjson' | 'json-array';

const NL = 0x0a;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function decoded(line: number, parts: Buffer[]): ImportFileRecord {
  try {
    return { line, text: utf8.decode(Buffer.concat(parts)).replace(/\r$/, '') };
  } catch {
    return { line, error: 'not valid UTF-8' };
  }
}

async function* ndjson(stream: AsyncIterable<Buffer | string>, maxBytes: number): AsyncGenerator<ImportFileRecord> {
  let line = 1;
  let parts: Buffer[] = [];
  let size = 0;
  let tooLong = false;
  const end = function* (): Generator<ImportFileRecord> {
    if (tooLong) yield { line, error: `longer than ${maxBytes} bytes` };
    else if (size > 0 && !(size === 1 && parts[0]![0] === 0x0d)) {
      const r = decoded(line, parts);
      if (!('text' in r) || r.text.trim() !== '') yield r;
    }
    line++;
    parts = [];
    size = 0;
    tooLong = false;
  };
  for await (const chunk of stream) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    for (let i = buf.indexOf(NL); i !== -1; i = buf.indexOf(NL, start)) {
      if (!tooLong) {
        if (size + i - start > maxBytes) tooLong = true;
        else parts.push(buf.subarray(start, i));
        size += i - start;
      }
      yield* end();
      start = i + 1;
    }
    if (start < buf.length && !tooLong) {
      if (size + buf.length - start > maxBytes) {
        tooLong = true;
        parts = [];
      } else parts.push(Buffer.from(buf.subarray(start)));
      size += buf.length - start;
    }
  }
  yield* end();
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);

async function* jsonArray(stream: AsyncIterable<Buffer | string>, maxBytes: number): AsyncGenerator<ImportFileRecord> {
  // before: nothing read yet; between: after '[' or a ','; in: inside an element (up to the ',' or
  // ']' that ends it, whitespace after it included); done: after ']'.
  let state = 'before' as 'before' | 'between' | 'in' | 'done';
  let index = 0;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let parts: Buffer[] = [];
  let size = 0;
  let tooLong = false;
  let elementStart = 0;
  const finish = (): ImportFileRecord => {
    const r: ImportFileRecord = tooLong ? { line: index, error: `longer than ${maxBytes} bytes` } : decoded(index, parts);
    parts = [];
    size = 0;
    tooLong = false;
    return r;
  };
  const keep = (buf: Buffer, from: number, to: number) => {
    if (tooLong || to <= from) return;
    size += to - from;
    if (size > maxBytes) {
      tooLong = true;
      parts = [];
    } else parts.push(Buffer.from(buf.subarray(from, to)));
  };
  for await (const chunk of stream) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    elementStart = 0;
    for (let i = 0; i < buf.length; i++) {
      const c = buf[i]!;
      if (state === 'in') {
        if (inString) {
          if (escaped) escaped = false;
          else if (c === 0x5c) escaped = true;
          else if (c === 0x22) inString = false;
          continue;
        }
        if (c === 0x22) inString = true;
        else if (c === 0x7b || c === 0x5b) depth++;
        else if (c === 0x7d || c === 0x5d) {
          if (depth === 0) {
            // ']' closing the array right after a scalar element.
            keep(buf, elementStart, i);
            yield finish();
            state = 'done';
            continue;
          }
          depth--;
        } else if (c === 0x2c && depth === 0) {
          keep(buf, elementStart, i);
          yield finish();
          state = 'between';
        }
        continue;
      }
      if (WS.has(c)) continue;
      if (state === 'before') {
        if (c !== 0x5b) {
          yield { line: 1, error: 'the body must be a JSON array (or NDJSON with Content-Type application/x-ndjson)' };
          return;
        }
        state = 'between';
      } else if (state === 'between') {
        if (c === 0x5d && index === 0) state = 'done';
        else if (c === 0x2c || c === 0x5d) {
          yield { line: index + 1, error: 'an empty element' };
          return;
        } else {
          index++;
          state = 'in';
          depth = 0;
          inString = false;
          escaped = false;
          elementStart = i;
          i--; // read the element's first character again, as part of it
          if (c === 0x22) {
            inString = true;
            i++;
          } else if (c === 0x7b || c === 0x5b) {
            depth = 1;
            i++;
          }
        }
      } else if (state === 'done') {
        yield { line: index + 1, error: 'text after the end of the array' };
        return;
      }
    }
    if (state === 'in') keep(buf, elementStart, buf.length);
  }
  const last = state as string;
  if (last === 'in') yield { line: index, error: 'the array ends inside this element' };
  else if (last !== 'done') yield { line: index + 1, error: last === 'before' ? 'the body is empty' : 'the array is not closed' };
}

/** The records of an import stream. */
export function readImportRecords(stream: AsyncIterable<Buffer | string>, format: ImportFormat, maxBytes = 64 * 1024): AsyncGenerator<ImportFileRecord> {
  return format === 'ndjson' ? ndjson(stream, maxBytes) : jsonArray(stream, maxBytes);
}

/** Records grouped in batches of at most `size`, for one upstream call each. */
export async function* inBatches<T>(records: AsyncIterable<T>, size: number): AsyncGenerator<T[]> {
  let batch: T[] = [];
  for await (const r of records) {
    batch.push(r);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}
