import { inBatches, readImportRecords, type ImportFileRecord } from './import-records';

/** The stream cut into chunks of `n` bytes, so records straddle chunks at every position. */
async function* chunks(text: string | Buffer, n: number): AsyncGenerator<Buffer> {
  const buf = Buffer.isBuffer(text) ? text : Buffer.from(text);
  for (let i = 0; i < buf.length; i += n) yield buf.subarray(i, i + n);
}

async function all(text: string | Buffer, format: 'ndjson' | 'json-array', n = 3, max?: number): Promise<ImportFileRecord[]> {
  const out: ImportFileRecord[] = [];
  for await (const r of readImportRecords(chunks(text, n), format, max)) out.push(r);
  return out;
}

describe('readImportRecords', () => {
  it('NDJSON: a record a line, blank lines counted but skipped, CRLF accepted, at every chunk boundary', async () => {
    const text = '{"a":1}\r\n\n  \n{"b":"x\\ny"}\n{"c":[1,2]}';
    for (const n of [1, 2, 5, 1000]) {
      expect(await all(text, 'ndjson', n)).toEqual([
        { line: 1, text: '{"a":1}' },
        { line: 4, text: '{"b":"x\\ny"}' },
        { line: 5, text: '{"c":[1,2]}' },
      ]);
    }
  });

  it('NDJSON: an over-long line and invalid UTF-8 are errors of their own line; reading goes on', async () => {
    const text = Buffer.concat([Buffer.from(`{"a":"${'x'.repeat(50)}"}\n`), Buffer.from([0xff, 0xfe, 0x0a]), Buffer.from('{"b":2}\n')]);
    expect(await all(text, 'ndjson', 7, 20)).toEqual([
      { line: 1, error: 'longer than 20 bytes' },
      { line: 2, error: 'not valid UTF-8' },
      { line: 3, text: '{"b":2}' },
    ]);
  });

  it('JSON array: its elements numbered from 1, strings with brackets and escapes kept whole, at every chunk boundary', async () => {
    const text = ' [ {"a":"]},[\\"{"}, {"b":[1,{"c":2}]} ,"s",3 ] ';
    for (const n of [1, 2, 7, 1000]) {
      expect(await all(text, 'json-array', n)).toEqual([
        { line: 1, text: '{"a":"]},[\\"{"}' },
        { line: 2, text: '{"b":[1,{"c":2}]} ' },
        { line: 3, text: '"s"' },
        { line: 4, text: '3 ' },
      ]);
    }
    expect(await all('[]', 'json-array')).toEqual([]);
  });

  it('JSON array: not an array, broken off, or followed by text: an error record, and the end', async () => {
    expect(await all('{"a":1}', 'json-array')).toEqual([{ line: 1, error: expect.stringMatching(/must be a JSON array/) }]);
    expect(await all('[{"a":1},{"b":', 'json-array')).toEqual([{ line: 1, text: '{"a":1}' }, { line: 2, error: 'the array ends inside this element' }]);
    expect(await all('[{"a":1}] x', 'json-array')).toEqual([{ line: 1, text: '{"a":1}' }, { line: 2, error: 'text after the end of the array' }]);
    expect(await all('', 'json-array')).toEqual([{ line: 1, error: 'the body is empty' }]);
    expect(await all(`[{"a":"${'x'.repeat(50)}"},{"b":1}]`, 'json-array', 4, 20)).toEqual([{ line: 1, error: 'longer than 20 bytes' }, { line: 2, text: '{"b":1}' }]);
  });

  it('inBatches groups records', async () => {
    async function* n() {
      for (let i = 0; i < 5; i++) yield i;
    }
    const out: number[][] = [];
    for await (const b of inBatches(n(), 2)) out.push(b);
    expect(out).toEqual([[0, 1], [2, 3], [4]]);
  });
});
