package io.hayloft.testkit;

import java.util.ArrayList;
import java.util.List;

/**
 * The end of a test fixture: closes what a test started, in the order given, skipping what it did not
 * get to start ({@code null}). Every one is closed even when an earlier one fails; the first failure
 * is then thrown, with the later ones suppressed in it. Stateless, thread-safe.
 */
public final class Closing {

    private Closing() {
    }

    /**
     * One resource that closes each of {@code resources} in their order, as {@link #all} does (for a
     * list of servers among the other things a fixture closes).
     */
    public static AutoCloseable each(Iterable<? extends AutoCloseable> resources) {
        return () -> {
            List<AutoCloseable> list = new ArrayList<>();
            resources.forEach(list::add);
            all(list.toArray(new AutoCloseable[0]));
        };
    }

    /** Closes each non-null of {@code resources}, first to last. */
    public static void all(AutoCloseable... resources) throws Exception {
        Exception first = null;
        for (AutoCloseable r : resources) {
            if (r == null) {
                continue;
            }
            try {
                r.close();
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
