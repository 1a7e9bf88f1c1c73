import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;

/**
 * Times DatabaseMetaData.getColumns for one table: java JdbcGetColumnsBench URL TABLE N
 *
 * Prints one line per call: "warm <ms>" for N calls in a row, then "ddl <ms>" for N calls
 * each preceded (untimed) by a DDL statement, so the catalog snapshot and the result cache
 * are rebuilt before the call.
 */
public class JdbcGetColumnsBench {
    public static void main(String[] args) throws Exception {
        String url = args[0];
        String table = args[1];
        int n = Integer.parseInt(args[2]);
        try (Connection conn = DriverManager.getConnection(url)) {
            DatabaseMetaData md = conn.getMetaData();
            for (int i = 0; i < 5; i++) {
                count(md, table);
            }
            for (int i = 0; i < n; i++) {
                long t0 = System.nanoTime();
                int cols = count(md, table);
                long t1 = System.nanoTime();
                if (cols == 0) throw new AssertionError("no columns");
                System.out.println("warm " + (t1 - t0) / 1e6);
            }
            try (Statement st = conn.createStatement()) {
                for (int i = 0; i < n; i++) {
                    st.execute((i % 2 == 0 ? "CREATE TABLE " : "DROP TABLE ") + table + "_scratch" + (i % 2 == 0 ? " (x int)" : ""));
                    long t0 = System.nanoTime();
                    count(md, table);
                    long t1 = System.nanoTime();
                    System.out.println("ddl " + (t1 - t0) / 1e6);
                }
            }
        }
    }

    static int count(DatabaseMetaData md, String table) throws Exception {
        int cols = 0;
        try (ResultSet rs = md.getColumns(null, "public", table, "%")) {
            while (rs.next()) {
                rs.getString("COLUMN_NAME");
                rs.getInt("DATA_TYPE");
                cols++;
            }
        }
        return cols;
    }
}
