import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.Statement;

/**
 * JDBC DatabaseMetaData against mzspark: java JdbcMetadata JDBC_URL TABLE
 *
 * Creates TABLE, then prints what the driver's metadata calls return, one fact per line
 * (tab-separated), for the Python test to check: getSchemas, getTables (tables and views),
 * getColumns, getPrimaryKeys, getIndexInfo, getTypeInfo, ResultSetMetaData of catalog
 * queries, and a setFetchSize(100) ResultSet read inside a transaction (named portals).
 */
public class JdbcMetadata {
    static void out(Object... parts) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < parts.length; i++) {
            if (i > 0) sb.append('\t');
            sb.append(parts[i]);
        }
        System.out.println(sb);
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        String table = args[1];
        try (Connection conn = DriverManager.getConnection(url)) {
            try (Statement st = conn.createStatement()) {
                st.execute("CREATE TABLE " + table + " (id int PRIMARY KEY, name varchar(20) NOT NULL, "
                        + "amount numeric(10,2), ts timestamptz, flag boolean, big bigint, note text)");
            }
            DatabaseMetaData md = conn.getMetaData();
            out("PRODUCT", md.getDatabaseProductName(), md.getDatabaseProductVersion());
            try (ResultSet rs = md.getSchemas()) {
                while (rs.next()) out("SCHEMA", rs.getString("TABLE_SCHEM"));
            }
            try (ResultSet rs = md.getTables(null, "public", "%", null)) {
                while (rs.next()) out("TABLE", rs.getString("TABLE_SCHEM"), rs.getString("TABLE_NAME"), rs.getString("TABLE_TYPE"));
            }
            try (ResultSet rs = md.getTables(null, "pg_catalog", "pg_%", new String[] {"TABLE", "VIEW", "SYSTEM TABLE", "SYSTEM VIEW"})) {
                int n = 0;
                while (rs.next()) {
                    n++;
                    if (rs.getString("TABLE_NAME").equals("pg_class") || rs.getString("TABLE_NAME").equals("pg_views")) {
                        out("SYSTABLE", rs.getString("TABLE_NAME"), rs.getString("TABLE_TYPE"));
                    }
                }
                out("SYSTABLES", n);
            }
            try (ResultSet rs = md.getColumns(null, "public", table, "%")) {
                while (rs.next()) {
                    out("COLUMN", rs.getString("COLUMN_NAME"), rs.getInt("DATA_TYPE"), rs.getString("TYPE_NAME"),
                            rs.getInt("COLUMN_SIZE"), rs.getInt("DECIMAL_DIGITS"), rs.getInt("NULLABLE"),
                            rs.getInt("ORDINAL_POSITION"), rs.getString("IS_NULLABLE"));
                }
            }
            try (ResultSet rs = md.getPrimaryKeys(null, "public", table)) {
                while (rs.next()) out("PK", rs.getString("COLUMN_NAME"), rs.getInt("KEY_SEQ"), rs.getString("PK_NAME"));
            }
            try (ResultSet rs = md.getIndexInfo(null, "public", table, false, true)) {
                while (rs.next()) {
                    out("INDEX", rs.getString("INDEX_NAME"), rs.getBoolean("NON_UNIQUE"), rs.getString("COLUMN_NAME"),
                            rs.getInt("ORDINAL_POSITION"));
                }
            }
            try (ResultSet rs = md.getTypeInfo()) {
                int n = 0;
                while (rs.next()) {
                    n++;
                    String name = rs.getString("TYPE_NAME");
                    if (name.equals("int4") || name.equals("text") || name.equals("uint8") || name.equals("numeric")) {
                        out("TYPEINFO", name, rs.getInt("DATA_TYPE"));
                    }
                }
                out("TYPEINFOS", n);
            }
            try (ResultSet rs = md.getImportedKeys(null, "public", table)) {
                int n = 0;
                while (rs.next()) n++;
                out("IMPORTEDKEYS", n);
            }
            try (ResultSet rs = md.getFunctions(null, "public", "%")) {
                int n = 0;
                while (rs.next()) n++;
                out("FUNCTIONS", n);
            }
            out("ISOLATION", conn.getTransactionIsolation());
            conn.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
            conn.setReadOnly(true);
            conn.setReadOnly(false);
            try (Statement st = conn.createStatement();
                    ResultSet rs = st.executeQuery("SELECT * FROM mz_internal.mz_compute_operator_hydration_statuses_per_worker")) {
                ResultSetMetaData m = rs.getMetaData();
                for (int i = 1; i <= m.getColumnCount(); i++) {
                    out("HYDRATION_COLUMN", m.getColumnName(i), m.getColumnTypeName(i));
                }
            }
            try (Statement st = conn.createStatement();
                    ResultSet rs = st.executeQuery("SELECT id, name, oid FROM mz_catalog.mz_tables WHERE name = '" + table + "'")) {
                ResultSetMetaData m = rs.getMetaData();
                for (int i = 1; i <= m.getColumnCount(); i++) out("MZ_TABLES_COLUMN", m.getColumnName(i), m.getColumnTypeName(i));
                while (rs.next()) out("MZ_TABLE", rs.getString(1), rs.getString(2), rs.getLong(3));
            }
            // A cursor-style read: fetch size inside a transaction uses a named portal and
            // Execute with a row limit (PortalSuspended between batches).
            int expected;
            try (Statement st = conn.createStatement();
                    ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_catalog.pg_attribute")) {
                rs.next();
                expected = rs.getInt(1);
            }
            conn.setAutoCommit(false);
            try (Statement st = conn.createStatement()) {
                st.setFetchSize(100);
                int n = 0;
                try (ResultSet rs = st.executeQuery("SELECT attrelid, attname, attnum FROM pg_catalog.pg_attribute ORDER BY attrelid, attnum")) {
                    while (rs.next()) n++;
                }
                out("FETCHED", n, expected);
            }
            conn.commit();
            conn.setAutoCommit(true);
            out("OK");
        }
    }
}
