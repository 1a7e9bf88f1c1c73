// node-postgres (npm `pg`) against mzspark: connect, parameterised queries, a pool.
// Usage: node catalog.js HOST PORT TABLE; prints one JSON document.
const { Client, Pool } = require("pg");

async function main() {
  const [host, port, table] = process.argv.slice(2);
  const config = { host, port: Number(port), user: "materialize", database: "materialize" };
  const out = {};
  const client = new Client(config);
  await client.connect();
  out.version = (await client.query("SELECT version()")).rows[0].version;
  out.relation = (await client.query(
    "SELECT c.relname, c.relkind, n.nspname FROM pg_catalog.pg_class c " +
      "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = $1", [table])).rows;
  out.columns = (await client.query(
    "SELECT column_name, data_type, is_nullable FROM information_schema.columns " +
      "WHERE table_name = $1 ORDER BY ordinal_position", [table])).rows;
  out.sum = (await client.query("SELECT $1::int + $2::int AS s", [40, 2])).rows[0].s;
  const hydration = await client.query("SELECT * FROM mz_internal.mz_compute_operator_hydration_statuses");
  out.hydrationFields = hydration.fields.map((f) => [f.name, f.dataTypeID]);
  await client.end();
  const pool = new Pool({ ...config, max: 2 });
  out.poolSchemas = (await pool.query("SELECT name FROM mz_catalog.mz_schemas ORDER BY name")).rows.map((r) => r.name);
  await pool.end();
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
