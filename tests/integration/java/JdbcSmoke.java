import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * JDBC smoke test for mzspark: java JdbcSmoke JDBC_URL TABLE
 *
 * With prepareThreshold=5 the driver sends the first executions of a PreparedStatement as
 * unnamed statements and switches to a named server-side statement (with binary transfer of
 * int4 results) from the 5th on, so 10 executions exercise both paths. Prints OK on success,
 * exits 1 with a message otherwise.
 */
public class JdbcSmoke {
    static void check(boolean cond, String what) {
        if (!cond) {
            throw new AssertionError(what);
        }
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        String table = args[1];
        try (Connection conn = DriverManager.getConnection(url)) {
            check(conn.getAutoCommit(), "autocommit by default");
            try (Statement st = conn.createStatement()) {
                try (ResultSet rs = st.executeQuery("SELECT 1")) {
                    check(rs.next() && rs.getInt(1) == 1, "SELECT 1");
                }
                st.execute("CREATE TABLE " + table + " (id int, name text)");
            }
            try (PreparedStatement ins =
                    conn.prepareStatement("INSERT INTO " + table + " VALUES (?, ?)")) {
                for (int i = 0; i < 10; i++) {
                    ins.setInt(1, i);
                    ins.setString(2, "name-" + i);
                    check(ins.executeUpdate() == 1, "insert " + i + " count");
                }
            }
            try (PreparedStatement sel = conn.prepareStatement(
                    "SELECT id * 10, name || '!' FROM " + table + " WHERE id = ? AND name = ?")) {
                for (int i = 0; i < 10; i++) {
                    sel.setInt(1, i);
                    sel.setString(2, "name-" + i);
                    try (ResultSet rs = sel.executeQuery()) {
                        check(rs.next(), "row for " + i);
                        check(rs.getInt(1) == i * 10, "id*10 for " + i + ": " + rs.getInt(1));
                        check(rs.getString(2).equals("name-" + i + "!"),
                                "name for " + i + ": " + rs.getString(2));
                        check(!rs.next(), "one row for " + i);
                    }
                }
            }
            try (Statement st = conn.createStatement();
                    ResultSet rs = st.executeQuery(
                            "SELECT count(*), sum(id) FROM " + table)) {
                check(rs.next(), "aggregate row");
                check(rs.getLong(1) == 10, "count " + rs.getLong(1));
                check(rs.getLong(2) == 45, "sum " + rs.getLong(2));
            }
            // Errors carry their SQLSTATE and leave the connection usable.
            try (Statement st = conn.createStatement()) {
                try {
                    st.executeQuery("SELECT * FROM no_such_jdbc_table");
                    check(false, "expected an error");
                } catch (SQLException e) {
                    check("42P01".equals(e.getSQLState()), "sqlstate " + e.getSQLState());
                }
                try (ResultSet rs = st.executeQuery("SELECT 2")) {
                    check(rs.next() && rs.getInt(1) == 2, "SELECT 2 after error");
                }
            }
            // Transactions through the JDBC API.
            conn.setAutoCommit(false);
            try (PreparedStatement ins =
                    conn.prepareStatement("INSERT INTO " + table + " VALUES (?, ?)")) {
                ins.setInt(1, 100);
                ins.setString(2, "rolled back");
                ins.executeUpdate();
                conn.rollback();
                ins.setInt(1, 101);
                ins.setString(2, "committed");
                ins.executeUpdate();
                conn.commit();
            }
            conn.setAutoCommit(true);
            try (Statement st = conn.createStatement();
                    ResultSet rs = st.executeQuery(
                            "SELECT id FROM " + table + " WHERE id >= 100 ORDER BY id")) {
                check(rs.next() && rs.getInt(1) == 101, "committed row");
                check(!rs.next(), "rolled back row absent");
            }
        }
        System.out.println("OK");
    }
}
