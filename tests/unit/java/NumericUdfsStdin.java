import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;

import mzspark.udf.NumericUdfs;

/**
 * Calls the numeric Java UDFs without Spark (tests/unit/test_numeric_jvm.py): one call per
 * line "f TAB a TAB b TAB S TAB keep" (a, b: decimal text, N for NULL, b an integer for
 * round / trunc, "L" + an integer for div_avg's int8 count), one result per line (NULL for
 * NULL, the error marker U+0001 as "ERR").
 */
public final class NumericUdfsStdin {
    private NumericUdfsStdin() {}

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        NumericUdfs.Div div = new NumericUdfs.Div();
        NumericUdfs.Mul mul = new NumericUdfs.Mul();
        NumericUdfs.Round round = new NumericUdfs.Round();
        NumericUdfs.Trunc trunc = new NumericUdfs.Trunc();
        NumericUdfs.Sqrt sqrt = new NumericUdfs.Sqrt();
        NumericUdfs.MinScale minScale = new NumericUdfs.MinScale();
        NumericUdfs.TrimScale trimScale = new NumericUdfs.TrimScale();
        String line;
        while ((line = in.readLine()) != null) {
            String[] p = line.split("\t", -1);
            String f = p[0];
            Object a = p[1].equals("N") ? null : new BigDecimal(p[1]);
            Object b;
            if (p[2].equals("N") || p[2].isEmpty()) {
                b = null;
            } else if (f.equals("round") || f.equals("trunc")) {
                b = Integer.valueOf(p[2]);
            } else if (p[2].startsWith("L")) {
                b = Long.valueOf(p[2].substring(1));
            } else {
                b = new BigDecimal(p[2]);
            }
            int s = Integer.parseInt(p[3]);
            String keep = p[4];
            String r = switch (f) {
                case "div", "div_avg" -> div.call(a, b, s, keep);
                case "mul" -> mul.call(a, b, s, keep);
                case "round" -> round.call(a, b, s, keep);
                case "trunc" -> trunc.call(a, b, s, keep);
                case "sqrt" -> sqrt.call(a, s, keep);
                case "min_scale" -> minScale.call(a, s, keep);
                case "trim_scale" -> trimScale.call(a, s, keep);
                default -> throw new IllegalArgumentException(f);
            };
            out.println(r == null ? "NULL" : r.replace("\u0001", "ERR"));
        }
        out.flush();
    }
}
