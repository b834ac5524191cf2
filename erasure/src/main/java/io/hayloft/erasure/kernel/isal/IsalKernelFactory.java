package io.hayloft.erasure.kernel.isal;

import io.hayloft.erasure.kernel.GfKernel;
import io.hayloft.erasure.kernel.Kernels;

/**
 * Entry point {@link Kernels} finds by name: loads {@code libhayloft-isal.so} (once per JVM) and
 * returns the ISA-L backend, or throws {@link IllegalStateException} with the reason it cannot
 * (for example "libhayloft-isal.so not in jar for linux-aarch64"). Thread-safe.
 */
public final class IsalKernelFactory implements Kernels.Factory {

    @Override
    public GfKernel create() {
        return Holder.get();
    }

    private static final class Holder {
        private static IsalKernel kernel;

        static synchronized IsalKernel get() {
            if (kernel == null) {
                kernel = new IsalKernel(NativeLibrary.get());
            }
            return kernel;
        }
    }
}
