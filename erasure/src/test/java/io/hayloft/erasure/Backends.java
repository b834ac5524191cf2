package io.hayloft.erasure;

import io.hayloft.erasure.kernel.GfKernel;
import io.hayloft.erasure.kernel.Kernels;
import java.util.stream.Stream;

/**
 * The backends the shared suite runs against: every one that loads in this JVM. A backend that does
 * not load is named once on stderr with its reason, so a skipped backend is visible in the log.
 */
final class Backends {

    private static volatile boolean reported;

    private Backends() {
    }

    static Stream<GfKernel> all() {
        if (!reported) {
            reported = true;
            for (String name : new String[] {"native", "vector"}) {
                if (Kernels.byName(name) == null) {
                    System.err.println("erasure suite: backend '" + name + "' not available here"
                            + (Kernels.unavailable().containsKey(name) ? ": " + Kernels.unavailable().get(name) : ""));
                }
            }
        }
        return Kernels.available().stream();
    }
}
