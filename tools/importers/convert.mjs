#!/usr/bin/env node
// Converts an export of another identity system to the bulk import's NDJSON (stdout); what it
// could not carry goes to stderr. Needs a built tree (`make build`): the converters are the
// directory's (services/directory/src/importers), tested there with fixture exports.
//
//   node tools/importers/convert.mjs keycloak realm-export.json [--keep-roles]
//   node tools/importers/convert.mjs auth0 users.ndjson            (or a JSON array)
//   node tools/importers/convert.mjs firebase users.json --hash-config hash.json
//        (or --signer-key K --salt-separator S --rounds 8 --mem-cost 14)
//   node tools/importers/convert.mjs csv users.csv
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';

const require = createRequire(import.meta.url);
const { fromAuth0, fromCsv, fromFirebase, fromKeycloak } = require('../../services/directory/dist/importers/index.js');

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'keep-roles': { type: 'boolean' },
    'hash-config': { type: 'string' },
    'signer-key': { type: 'string' },
    'salt-separator': { type: 'string' },
    rounds: { type: 'string' },
    'mem-cost': { type: 'string' },
  },
});
const [kind, file] = positionals;
if (!kind || !file) {
  process.stderr.write('usage: convert.mjs keycloak|auth0|firebase|csv FILE [options] > users.ndjson\n');
  process.exit(2);
}
const text = readFileSync(file, 'utf8');

function* converted() {
  switch (kind) {
    case 'keycloak':
      yield* fromKeycloak(JSON.parse(text), { keepRoles: values['keep-roles'] === true });
      return;
    case 'auth0': {
      const records = text.trimStart().startsWith('[') ? JSON.parse(text) : text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
      for (const r of records) yield fromAuth0(r);
      return;
    }
    case 'firebase': {
      const c = values['hash-config'] ? JSON.parse(readFileSync(values['hash-config'], 'utf8')) : { signerKey: values['signer-key'], saltSeparator: values['salt-separator'], rounds: Number(values.rounds), memCost: Number(values['mem-cost']) };
      if (!c.signerKey || !c.saltSeparator || !c.rounds || !c.memCost) throw new Error('firebase needs --hash-config or --signer-key, --salt-separator, --rounds and --mem-cost');
      yield* fromFirebase(JSON.parse(text), c);
      return;
    }
    case 'csv':
      yield* fromCsv(text);
      return;
    default:
      throw new Error(`unknown kind ${kind}: keycloak, auth0, firebase or csv`);
  }
}

let users = 0;
let skipped = 0;
try {
  for (const c of converted()) {
    if ('skip' in c) {
      skipped++;
      process.stderr.write(`skipped: ${c.skip}\n`);
      continue;
    }
    for (const w of c.warnings ?? []) process.stderr.write(`warning: ${w}\n`);
    process.stdout.write(`${JSON.stringify(c.user)}\n`);
    users++;
  }
} catch (err) {
  process.stderr.write(`convert: ${err.message}\n`);
  process.exit(1);
}
process.stderr.write(`${users} users converted, ${skipped} skipped\n`);
