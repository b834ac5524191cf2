package io.hayloft.erasure.kernel;

import java.lang.reflect.InvocationTargetException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Chooses the GF(2^8) backend, in one place: native (ISA-L) first, then the Vector API, then scalar
 * Java. Each backend that cannot be used leaves its reason here, and the fallback is logged once.
 *
 * <p>Force a backend with the system property {@value #PROPERTY} or the environment variable
 * {@value #ENV}: {@code auto} (default), {@code native}, {@code vector} or {@code java}. Forcing a
 * backend that cannot load fails with its reason rather than silently using another.
 *
 * <p>Backends are found by class name so that this module compiles and runs without the incubating
 * Vector API module and without the native library. Thread-safe; the choice is made once.
 */
public final class Kernels {

    public static final String PROPERTY = "hayloft.erasure.backend";
    public static final String ENV = "HAYLOFT_EC_BACKEND";

    static final String NATIVE_FACTORY = "io.hayloft.erasure.kernel.isal.IsalKernelFactory";
    static final String VECTOR_FACTORY = "io.hayloft.erasure.kernel.vector.VectorKernelFactory";

    private static final Logger LOG = LoggerFactory.getLogger(Kernels.class);

    /**
     * Implemented by each optional backend's factory class (public, with a public no-argument
     * constructor). {@link #create()} throws with a human-readable message when unavailable.
     */
    public interface Factory {
        GfKernel create() throws Exception;
    }

    private static final class Holder {
        static final Kernels INSTANCE;
        static final RuntimeException FAILURE;

        static {
            Kernels k = null;
            RuntimeException failure = null;
            try {
                k = new Kernels();
            } catch (RuntimeException e) {
                failure = e;
            }
            INSTANCE = k;
            FAILURE = failure;
        }

        static Kernels get() {
            if (FAILURE != null) {
                // A forced backend that cannot load, or an unknown name: the same clear error on every call.
                throw FAILURE instanceof IllegalArgumentException ? new IllegalArgumentException(FAILURE.getMessage(), FAILURE)
                        : new IllegalStateException(FAILURE.getMessage(), FAILURE);
            }
            return INSTANCE;
        }
    }

    private final Map<String, String> unavailable = new LinkedHashMap<>();
    private final GfKernel chosen;
    private final String requested;

    private Kernels() {
        String req = System.getProperty(PROPERTY);
        if (req == null || req.isBlank()) {
            req = System.getenv(ENV);
        }
        requested = (req == null || req.isBlank()) ? "auto" : req.trim().toLowerCase(Locale.ROOT);
        chosen = choose(requested);
    }

    private GfKernel choose(String req) {
        switch (req) {
            case "java":
                return ScalarKernel.INSTANCE;
            case "vector":
                return forced("vector", VECTOR_FACTORY);
            case "native":
                return forced("native", NATIVE_FACTORY);
            case "auto":
                break;
            default:
                throw new IllegalArgumentException("unknown erasure backend '" + req + "' in " + PROPERTY + "/" + ENV
                        + "; expected auto, native, vector or java");
        }
        GfKernel k = tryLoad("native", NATIVE_FACTORY);
        if (k == null) {
            k = tryLoad("vector", VECTOR_FACTORY);
        }
        if (k == null) {
            k = ScalarKernel.INSTANCE;
        }
        if (!unavailable.isEmpty()) {
            LOG.info("erasure backend '{}' in use; not available: {}", k.name(), unavailable);
        }
        return k;
    }

    private GfKernel forced(String name, String factory) {
        GfKernel k = tryLoad(name, factory);
        if (k == null) {
            throw new IllegalStateException("erasure backend '" + name + "' was requested but is not available: "
                    + unavailable.get(name));
        }
        return k;
    }

    private GfKernel tryLoad(String name, String factoryClass) {
        try {
            Class<?> c = Class.forName(factoryClass, true, Kernels.class.getClassLoader());
            Factory f = (Factory) c.getDeclaredConstructor().newInstance();
            return f.create();
        } catch (ClassNotFoundException e) {
            unavailable.put(name, "not built into this jar");
        } catch (NoClassDefFoundError e) {
            unavailable.put(name, "missing class " + e.getMessage()
                    + (name.equals("vector") ? " (start the JVM with --add-modules jdk.incubator.vector)" : ""));
        } catch (InvocationTargetException e) {
            Throwable t = e.getCause() == null ? e : e.getCause();
            unavailable.put(name, String.valueOf(t.getMessage() == null ? t : t.getMessage()));
        } catch (Exception | LinkageError e) {
            unavailable.put(name, String.valueOf(e.getMessage() == null ? e : e.getMessage()));
        }
        return null;
    }

    /** The backend every codec uses unless one is passed explicitly. */
    public static GfKernel best() {
        return Holder.get().chosen;
    }

    /** What was requested: auto, native, vector or java. */
    public static String requested() {
        return Holder.get().requested;
    }

    /** Backends that could not be used, with the reason, in the order they were tried. */
    public static Map<String, String> unavailable() {
        return Collections.unmodifiableMap(Holder.get().unavailable);
    }

    /**
     * Every backend that loads in this JVM, scalar last. For tests and benchmarks that run one suite
     * against each backend; does not change {@link #best()}.
     */
    public static List<GfKernel> available() {
        List<GfKernel> list = new ArrayList<>();
        for (String f : new String[] {NATIVE_FACTORY, VECTOR_FACTORY}) {
            GfKernel k = loadQuietly(f);
            if (k != null) {
                list.add(k);
            }
        }
        list.add(ScalarKernel.INSTANCE);
        return list;
    }

    /** The named backend if it loads here, else {@code null}. */
    public static GfKernel byName(String name) {
        switch (name) {
            case "java":
                return ScalarKernel.INSTANCE;
            case "vector":
                return loadQuietly(VECTOR_FACTORY);
            case "native":
                return loadQuietly(NATIVE_FACTORY);
            default:
                throw new IllegalArgumentException("unknown erasure backend '" + name + "'; expected native, vector or java");
        }
    }

    private static GfKernel loadQuietly(String factoryClass) {
        try {
            Class<?> c = Class.forName(factoryClass, true, Kernels.class.getClassLoader());
            return ((Factory) c.getDeclaredConstructor().newInstance()).create();
        } catch (Exception | LinkageError e) {
            return null;
        }
    }
}
