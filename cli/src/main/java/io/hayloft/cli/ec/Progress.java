package io.hayloft.cli.ec;

import java.io.PrintWriter;
import java.util.Locale;

/**
 * A carriage-return progress bar on stderr for long runs: {@code encode [#####.....]  52%  133/256 MiB}.
 * Shown when stderr is a terminal ({@code System.console() != null}) or when asked for with
 * {@code --progress}; otherwise every call is a no-op. Redraws at most every 100 ms. Not thread-safe:
 * one command thread drives it.
 */
public final class Progress implements AutoCloseable {

    /** Starts bars; lets operations show progress without knowing where it goes. */
    @FunctionalInterface
    public interface Factory {
        /** A factory whose bars never draw. */
        Factory NONE = (label, total) -> none();

        Progress start(String label, long total);

        /** Bars on {@code err}, shown if {@code forced} or stderr is a terminal. */
        static Factory of(PrintWriter err, boolean forced) {
            return (label, total) -> Progress.start(err, forced, label, total);
        }
    }

    private static final int WIDTH = 30;
    private static final long REDRAW_NANOS = 100_000_000L;

    private final PrintWriter err;
    private final boolean enabled;
    private final String label;
    private final long total;
    private long done;
    private long lastDraw;
    private boolean drawn;

    private Progress(PrintWriter err, boolean enabled, String label, long total) {
        this.err = err;
        this.enabled = enabled && total > 0;
        this.label = label;
        this.total = total;
    }

    /** A bar for {@code total} bytes of work, shown if {@code forced} or stderr is a terminal. */
    public static Progress start(PrintWriter err, boolean forced, String label, long total) {
        return new Progress(err, forced || System.console() != null, label, total);
    }

    private String detail = "";

    /** A bar that never draws. */
    public static Progress none() {
        return new Progress(null, false, "", 0);
    }

    /** Text drawn after the byte counts (e.g. "3/8 stripes"); shown at the next redraw. */
    public void detail(String text) {
        detail = text == null ? "" : text;
    }

    /** Records {@code bytes} more bytes done. */
    public void add(long bytes) {
        if (!enabled) {
            return;
        }
        done = Math.min(total, done + bytes);
        long now = System.nanoTime();
        if (!drawn || now - lastDraw >= REDRAW_NANOS || done == total) {
            draw();
            lastDraw = now;
        }
    }

    private void draw() {
        int filled = (int) (WIDTH * done / total);
        StringBuilder sb = new StringBuilder("\r").append(label).append(" [");
        for (int i = 0; i < WIDTH; i++) {
            sb.append(i < filled ? '#' : '.');
        }
        sb.append("] ").append(String.format(Locale.ROOT, "%3d%%  %s / %s", 100 * done / total,
                SizeConverter.format(done), SizeConverter.format(total)));
        if (!detail.isEmpty()) {
            sb.append("  ").append(detail);
        }
        err.print(sb);
        err.flush();
        drawn = true;
    }

    /** Ends the bar's line, if one was drawn. */
    @Override
    public void close() {
        if (enabled && drawn) {
            err.println();
            err.flush();
        }
    }
}
