// stock_client.js -- drives kiln-server through node-hbase (the `hbase`
// package from the npm registry, an HBase REST client used unchanged) and
// compares every answer with embedded `kiln` on the same data directory.
//
//   node stock_client.js HOST PORT KILN DATA_DIR
//
// The client runs with encoding 'base64', so keys, columns and values reach
// this script exactly as the server sent them; its answers are put back into
// HBase's CellSet JSON and compared byte for byte with `kiln ... --json`.
// Each call has a deadline: a call the server never answers fails, it never
// hangs the test. Prints one line per failure and "N passed, N failed".
'use strict';

const path = require('path');
const { execFileSync } = require('child_process');

let hbase;
try {
  hbase = require(path.join(__dirname, 'node_modules', 'hbase'));
} catch (e) {
  console.log('FAIL: the hbase package is not installed in ' + __dirname +
              ' (scripts/deps.sh installs it): ' + e.message);
  console.log('0 passed, 1 failed');
  process.exit(1);
}

const [host, port, kiln, dataDir] = process.argv.slice(2);
const CALL_MS = 10000;
const client = hbase({ host, port: Number(port), encoding: 'base64', timeout: CALL_MS });

let passed = 0;
let failed = 0;
const b64 = (s) => Buffer.from(s, 'latin1').toString('base64');

function embedded(args) {
  return execFileSync(kiln, ['--data', dataDir].concat(args), { encoding: 'latin1' }).trimEnd();
}

// Cells {key?, column, timestamp, $} (base64 strings) as HBase's CellSet
// JSON, consecutive cells of one key in one row.
function cellset(cells, key) {
  const rows = [];
  for (const c of cells) {
    const k = c.key !== undefined ? c.key : key;
    if (rows.length === 0 || rows[rows.length - 1].key !== k) rows.push({ key: k, Cell: [] });
    rows[rows.length - 1].Cell.push({ column: c.column, timestamp: c.timestamp, $: c.$ });
  }
  return JSON.stringify({ Row: rows });
}

function withDeadline(name, run) {
  return new Promise((resolve) => {
    let settled = false;
    const timer = setTimeout(() => {
      if (!settled) {
        settled = true;
        resolve({ err: new Error(`no answer within ${CALL_MS} ms`) });
      }
    }, CALL_MS + 1000);
    try {
      run((err, value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ err, value });
      });
    } catch (e) {
      settled = true;
      clearTimeout(timer);
      resolve({ err: e });
    }
  });
}

async function check(name, run, want) {
  const { err, value } = await withDeadline(name, run);
  let got;
  if (err) {
    got = `error: ${err.message}${err.body ? ' ' + String(err.body).slice(0, 200) : ''}`;
  } else {
    got = value;
  }
  if (got === want) {
    passed++;
  } else {
    failed++;
    console.log(`FAIL: ${name}\n  got:  ${String(got).slice(0, 600)}\n  want: ${String(want).slice(0, 600)}`);
  }
}

// A scan's cells through the library's stream (its scanner protocol).
function scanCells(table, options) {
  return (done) => {
    client.table(table).scan(options, (err, cells) => done(err, err ? null : cellset(cells)));
  };
}

async function main() {
  const t = client.table('users');

  // ---- get
  await check('get of a row', (done) =>
    t.row('alice').get((err, cells) => done(err, err ? null : cellset(cells, b64('alice')))),
    embedded(['get', 'users', 'alice', '--json']));
  await check('get of a column (percent-encoded f%3Aname)', (done) =>
    t.row('alice').get('f:name', (err, cells) => done(err, err ? null : cellset(cells, b64('alice')))),
    embedded(['get', 'users', 'alice', 'f:name', '--json']));
  await check('get of versions', (done) =>
    t.row('alice').get('f:name', { v: 3 }, (err, cells) =>
      done(err, err ? null : cellset(cells, b64('alice')))),
    embedded(['get', 'users', 'alice', 'f:name', '--versions', '3', '--json']));
  await check('get of an absent row is a 404', (done) =>
    t.row('nobody').get((err) => done(null, err ? `status ${err.code}` : 'found')),
    'status 404');

  // ---- exists
  await check('exists of a table', (done) => t.exists(done),
    embedded(['exists', 'users']) === 'Table users does exist');
  await check('exists of a missing table', (done) => client.table('nope').exists(done), false);

  // ---- scan with filters, through the scanner protocol
  await check('scan of the whole table', scanCells('users', {}),
    embedded(['scan', 'users', '--json']));
  await check('scan with startRow and endRow', scanCells('users', { startRow: b64('b'), endRow: b64('r0005') }),
    embedded(['scan', 'users', '--start', 'b', '--stop', 'r0005', '--json']));
  await check('scan with a PrefixFilter', scanCells('users', { filter: { type: 'PrefixFilter', value: b64('r00') } }),
    embedded(['scan', 'users', '--prefix', 'r00', '--json']));
  const bob = JSON.parse(embedded(['get', 'users', 'bob', 'f:name', '--json']));
  await check('scan with a ValueFilter (BinaryComparator)', scanCells('users', {
    filter: { type: 'ValueFilter', op: 'EQUAL', comparator: { type: 'BinaryComparator', value: b64('Bob') } },
  }), JSON.stringify(bob));
  await check('scan with a column and maxVersions', scanCells('users', { column: [b64('g')], maxVersions: 1 }),
    embedded(['scan', 'users', '--columns', 'g', '--json']));

  // ---- multi-get: row globbing through the library, and /multiget through
  // its connection (the library has no call of its own for it)
  await check('row glob r001*', (done) =>
    t.row('r001*').get((err, cells) => done(err, err ? null : cellset(cells))),
    embedded(['scan', 'users', '--prefix', 'r001', '--json']));
  await check('multiget of three rows', (done) =>
    client.connection.get('/users/multiget?row=alice&row=nobody&row=bob', (err, data) =>
      done(err, err ? null : JSON.stringify(data))),
    embedded(['multiget', 'users', 'alice', 'nobody', 'bob', '--json']));

  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

main().catch((e) => {
  console.log(`FAIL: ${e.stack}`);
  console.log(`${passed} passed, ${failed + 1} failed`);
  process.exit(1);
});
