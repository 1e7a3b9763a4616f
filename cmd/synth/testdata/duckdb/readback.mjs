// Reads a file with DuckDB (read_parquet, or read_csv with DuckDB's own
// type detection) and prints, as JSON, its columns with the types DuckDB
// gives them, its row count, and the query's result given as argv[3].
import { DuckDBInstance } from '@duckdb/node-api';

const [path, query] = process.argv.slice(2);
const reader = path.endsWith('.parquet') ? 'read_parquet' : 'read_csv';
const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
await con.run(`SET TimeZone = 'UTC'`);
await con.run(`CREATE VIEW t AS SELECT * FROM ${reader}('${path.replaceAll("'", "''")}')`);
const desc = await con.runAndReadAll('DESCRIBE t');
const cols = desc.getRowsJson().map(r => [r[0], r[1]]);
const n = await con.runAndReadAll('SELECT count(*) FROM t');
const out = { columns: cols, rows: Number(n.getRowsJson()[0][0]) };
if (query) {
  out.result = (await con.runAndReadAll(query)).getRowsJson();
}
console.log(JSON.stringify(out));
