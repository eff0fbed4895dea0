#!/usr/bin/env node
// read_parquet.mjs prints the rows of a Parquet file as JSON lines, read by
// DuckDB: an independent reader for the shards interop test
// (shards/interop_test.go), and a quick way to look into a shard.
//
//   node tools/interop/read_parquet.mjs FILE             one JSON object per row, in file order
//   node tools/interop/read_parquet.mjs --describe FILE  one {"column_name", "column_type", "null"} per column
//
// Values keep their types: lists are arrays, maps are objects, NULL is null,
// BIGINT is a number where it is exact and a decimal string otherwise, and a
// floating-point NaN, infinity or negative zero is the string "NaN",
// "Infinity", "-Infinity" or "-0". Install with `npm ci` in this directory.

import {
  DuckDBInstance,
  DuckDBListValue,
  DuckDBMapValue,
  DuckDBStructValue,
  DuckDBBlobValue,
} from '@duckdb/node-api';

function usage() {
  process.stderr.write('usage: node read_parquet.mjs [--describe] FILE\n');
  process.exit(2);
}

// toJSON turns a DuckDB value into a plain JSON value.
function toJSON(v) {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      if (Object.is(v, -0)) return '-0'; // JSON.stringify would print 0
      return Number.isFinite(v) ? v : String(v);
    case 'bigint':
      return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)
        ? Number(v)
        : v.toString();
  }
  if (v instanceof DuckDBListValue) return v.items.map(toJSON);
  if (v instanceof DuckDBMapValue) {
    const o = {};
    for (const { key, value } of v.entries) o[String(toJSON(key))] = toJSON(value);
    return o;
  }
  if (v instanceof DuckDBStructValue) {
    const o = {};
    for (const [k, x] of Object.entries(v.entries)) o[k] = toJSON(x);
    return o;
  }
  if (v instanceof DuckDBBlobValue) return Buffer.from(v.bytes).toString('base64');
  return String(v);
}

async function main() {
  const args = process.argv.slice(2);
  const describe = args[0] === '--describe';
  if (describe) args.shift();
  if (args.length !== 1) usage();
  const file = args[0];

  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  const sql = describe
    ? 'DESCRIBE SELECT * FROM read_parquet(?)'
    : 'SELECT * EXCLUDE (file_row_number) FROM read_parquet(?, file_row_number = true) ORDER BY file_row_number';
  const result = await connection.stream(sql, [file]);
  const out = [];
  for await (const rows of result.yieldRowObjects()) {
    for (const row of rows) {
      const o = {};
      for (const [k, v] of Object.entries(row)) {
        if (describe && !['column_name', 'column_type', 'null'].includes(k)) continue;
        o[k] = toJSON(v);
      }
      out.push(JSON.stringify(o));
      if (out.length >= 1024) {
        process.stdout.write(out.join('\n') + '\n');
        out.length = 0;
      }
    }
  }
  if (out.length > 0) process.stdout.write(out.join('\n') + '\n');
  connection.closeSync();
  instance.closeSync();
}

main().catch((err) => {
  process.stderr.write(`read_parquet: ${err.message ?? err}\n`);
  process.exit(1);
});
