package io.hayloft.erasure.kernel.vector;

import io.hayloft.erasure.kernel.GfKernel;
import io.hayloft.erasure.kernel.Kernels;

/**
 * Loads the {@link VectorKernel} for {@link Kernels}, which finds this class by name. It checks that the
 * incubating {@code jdk.incubator.vector} module is in the boot layer before any class of that module
 * is touched, so a JVM started without {@code --add-modules jdk.incubator.vector} gets a clear reason
 * (and {@link Kernels} falls back to the scalar kernel) instead of a linkage error.
 *
 * <p>Stateless and thread-safe.
 */
public final class VectorKernelFactory implements Kernels.Factory {

    static final String MODULE = "jdk.incubator.vector";

    public VectorKernelFactory() {
    }

    @Override
    public GfKernel create() {
        if (ModuleLayer.boot().findModule(MODULE).isEmpty()) {
            throw new IllegalStateException("module " + MODULE + " is not in the boot layer"
                    + " (start the JVM with --add-modules " + MODULE + ")");
        }
        return VectorKernel.create();
    }
}
