package io.hayloft.erasure.kernel.isal;

import static org.assertj.core.api.Assertions.fail;

import org.junit.jupiter.api.Assumptions;

/**
 * The native kernel, or a skipped test that names why it is unavailable. With the environment
 * variable {@code HAYLOFT_REQUIRE_NATIVE=1} (set by .ci/run, which installs gcc and libisal-dev) an
 * unavailable native backend fails instead, so CI cannot silently test nothing.
 */
final class NativeOrSkip {

    private NativeOrSkip() {
    }

    static IsalKernel kernel() {
        try {
            return (IsalKernel) new IsalKernelFactory().create();
        } catch (IllegalStateException e) {
            if ("1".equals(System.getenv("HAYLOFT_REQUIRE_NATIVE"))) {
                fail("HAYLOFT_REQUIRE_NATIVE=1 but the ISA-L backend is unavailable: " + e.getMessage());
            }
            System.err.println("native tests skipped: " + e.getMessage());
            Assumptions.abort("ISA-L native backend unavailable: " + e.getMessage());
            throw e; // not reached
        }
    }
}
