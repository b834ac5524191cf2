package io.hayloft.cli.demo;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A plain-text table for the demo's acts: a title, a header row and rows, the first column
 * left-aligned and the others right-aligned, every column as wide as its widest cell. Not
 * thread-safe; build one per table.
 */
final class DemoTable {
    private final String title;
    private final List<String[]> rows = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();

    DemoTable(String title, String... header) {
        this.title = title;
        rows.add(header);
    }

    DemoTable row(Object... cells) {
        if (cells.length != rows.get(0).length) {
            throw new IllegalArgumentException("a row of " + cells.length + " cells in a table of " + rows.get(0).length
                    + " columns");
        }
        String[] s = new String[cells.length];
        for (int i = 0; i < cells.length; i++) {
            s[i] = String.valueOf(cells[i]);
        }
        rows.add(s);
        return this;
    }

    /** A line printed under the table. */
    DemoTable note(String line) {
        notes.add(line);
        return this;
    }

    void print(PrintWriter out) {
        int cols = rows.get(0).length;
        int[] width = new int[cols];
        for (String[] r : rows) {
            for (int c = 0; c < cols; c++) {
                width[c] = Math.max(width[c], r[c].length());
            }
        }
        out.println();
        out.println(title);
        for (int i = 0; i < rows.size(); i++) {
            String[] r = rows.get(i);
            StringBuilder b = new StringBuilder("  ");
            for (int c = 0; c < cols; c++) {
                String cell = r[c];
                String pad = " ".repeat(width[c] - cell.length());
                b.append(c == 0 ? cell + pad : pad + cell).append(c == cols - 1 ? "" : "   ");
            }
            out.println(b.toString().stripTrailing());
            if (i == 0) {
                int total = 0;
                for (int w : width) {
                    total += w;
                }
                out.println("  " + "-".repeat(total + 3 * (cols - 1)));
            }
        }
        for (String n : notes) {
            out.println("  " + n);
        }
        out.flush();
    }

    static String mib(long bytes) {
        return String.format(Locale.ROOT, "%.1f MiB", bytes / 1048576.0);
    }

    /** Bytes in B, KiB or MiB, whichever reads best. */
    static String size(long bytes) {
        return bytes < 1024 ? bytes + " B" : bytes < 1048576 ? String.format(Locale.ROOT, "%.0f KiB", bytes / 1024.0) : mib(bytes);
    }

    static String ms(long nanos) {
        return String.format(Locale.ROOT, "%.2f", nanos / 1e6);
    }

    static String secs(long nanos) {
        return String.format(Locale.ROOT, "%.2f s", nanos / 1e9);
    }

    static String ratio(double x) {
        return String.format(Locale.ROOT, "%.2f", x);
    }

    static String rate(double perSecond) {
        return String.format(Locale.ROOT, "%,.0f", perSecond);
    }

    static String mibPerSec(long bytes, long nanos) {
        return nanos <= 0 ? "-" : String.format(Locale.ROOT, "%.1f", bytes / 1048576.0 / (nanos / 1e9));
    }
}
