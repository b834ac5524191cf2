package io.hayloft.erasure.kernel;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What {@code hayloft ec info} prints: the erasure backend in use and why, the ISA-L build and
 * kernel family when native is loaded, and the CPU features ISA-L can use.
 *
 * <pre>
 * backend: native (ISA-L 2.31.1, GFNI (AVX-512) kernels (ec_encode_data_avx512_gfni))
 * requested: auto (-Dhayloft.erasure.backend or HAYLOFT_EC_BACKEND: auto, native, vector, java)
 * available: native, vector, java
 * isa-l: 2.31.1, Debian trixie libisal2 2.31.1-1.1, linked dynamic
 * isa-l kernels: GFNI (AVX-512), ec_encode_data_avx512_gfni
 * cpu: AMD EPYC 9B14
 * cpu features for isa-l: ssse3 sse4_1 avx avx2 avx512f avx512bw avx512vl avx512dq avx512vbmi gfni vpclmulqdq
 * </pre>
 *
 * Lines are {@code key: value} so scripts can grep them. Stateless and thread-safe; the first call
 * triggers backend selection ({@link Kernels#best()}).
 */
public final class BackendInfo {

    /** x86 CPU flags (as /proc/cpuinfo names them) that ISA-L's erasure and CRC kernels dispatch on. */
    static final List<String> X86_FEATURES = List.of("ssse3", "sse4_1", "avx", "avx2", "avx512f", "avx512bw",
            "avx512vl", "avx512dq", "avx512vbmi", "gfni", "vpclmulqdq", "pclmulqdq");
    /** arm64 features ISA-L uses. */
    static final List<String> ARM_FEATURES = List.of("asimd", "sve", "sve2", "pmull");

    private BackendInfo() {
    }

    /** Prints {@link #lines()}, one per line; for {@code java -cp ... io.hayloft.erasure.kernel.BackendInfo}. */
    public static void main(String[] args) {
        lines().forEach(System.out::println);
    }

    /** The report, one {@code key: value} line each. Never throws: failures become lines. */
    public static List<String> lines() {
        List<String> out = new ArrayList<>();
        GfKernel best = null;
        try {
            best = Kernels.best();
            out.add("backend: " + best.name() + " (" + best.description() + ")");
        } catch (RuntimeException | LinkageError e) {
            out.add("backend: none: " + reason(e));
        }
        String requested;
        try {
            requested = Kernels.requested();
        } catch (RuntimeException | LinkageError e) {
            requested = String.valueOf(System.getProperty(Kernels.PROPERTY, System.getenv(Kernels.ENV)));
        }
        out.add("requested: " + requested + " (-D" + Kernels.PROPERTY + " or " + Kernels.ENV
                + ": auto, native, vector, java)");
        List<String> names = new ArrayList<>();
        for (GfKernel k : Kernels.available()) {
            names.add(k.name());
        }
        out.add("available: " + String.join(", ", names));
        Map<String, String> off;
        try {
            off = Kernels.unavailable();
        } catch (RuntimeException | LinkageError e) {
            off = Map.of();
        }
        for (Map.Entry<String, String> e : off.entrySet()) {
            out.add(e.getKey() + ": off: " + e.getValue());
        }
        GfKernel nat = Kernels.byName("native");
        if (nat == null && !off.containsKey("native")) {
            out.add("native: off: " + nativeReason());
        } else if (nat != null && (best == null || !best.name().equals("native"))) {
            out.add("native: loads, but not selected (requested " + requested + ")");
        }
        String isalVersion = null;
        if (nat != null) {
            isalVersion = call(nat, "isalVersion");
            out.add("isa-l: " + isalVersion + ", " + call(nat, "isalSource") + ", linked " + call(nat, "linkage"));
            out.add("isa-l kernels: " + call(nat, "kernelFamily") + ", " + call(nat, "dispatched"));
            out.add("isa-l loaded from: " + call(nat, "loadedFrom"));
        }
        Set<String> flags = cpuFlags();
        String model = cpuModel();
        out.add("cpu: " + (model == null ? System.getProperty("os.arch") : model));
        boolean arm = System.getProperty("os.arch", "").contains("aarch64");
        List<String> have = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        for (String f : arm ? ARM_FEATURES : X86_FEATURES) {
            (flags.contains(f) ? have : missing).add(f);
        }
        out.add("cpu features for isa-l: " + (flags.isEmpty() ? "unknown (no /proc/cpuinfo)" : String.join(" ", have)));
        if (!missing.isEmpty() && !flags.isEmpty()) {
            out.add("cpu features missing: " + String.join(" ", missing));
        }
        if (flags.contains("gfni") && isalVersion != null && !atLeast(isalVersion, 2, 31)) {
            out.add("note: this CPU has GFNI but ISA-L " + isalVersion
                    + " has no GFNI kernels (2.31+ does); the build fetches 2.31+ from Debian when it can");
        }
        return out;
    }

    /** The message of a selection failure, unwrapping the static initializer that threw it. */
    private static String reason(Throwable e) {
        Throwable t = e instanceof ExceptionInInitializerError && e.getCause() != null ? e.getCause() : e;
        return t.getMessage() == null ? t.toString() : t.getMessage();
    }

    private static String nativeReason() {
        try {
            Class<?> c = Class.forName(Kernels.NATIVE_FACTORY, true, BackendInfo.class.getClassLoader());
            ((Kernels.Factory) c.getDeclaredConstructor().newInstance()).create();
            return "unknown";
        } catch (ClassNotFoundException e) {
            return "not built into this jar";
        } catch (InvocationTargetException e) {
            return String.valueOf(e.getCause());
        } catch (Exception | LinkageError e) {
            return e.getMessage() == null ? e.toString() : e.getMessage();
        }
    }

    /** Calls a public no-argument String getter of the native kernel without a compile-time dependency on it. */
    private static String call(GfKernel k, String method) {
        try {
            return String.valueOf(k.getClass().getMethod(method).invoke(k));
        } catch (ReflectiveOperationException e) {
            return "unknown";
        }
    }

    static boolean atLeast(String version, int major, int minor) {
        String[] p = version.split("[.\\-]");
        try {
            int ma = Integer.parseInt(p[0]);
            int mi = p.length > 1 ? Integer.parseInt(p[1]) : 0;
            return ma > major || (ma == major && mi >= minor);
        } catch (NumberFormatException e) {
            return false;
        }
    }

    static Set<String> cpuFlags() {
        Set<String> flags = new LinkedHashSet<>();
        for (String line : cpuinfo()) {
            String l = line.toLowerCase(Locale.ROOT);
            if (l.startsWith("flags") || l.startsWith("features")) {
                int colon = l.indexOf(':');
                for (String f : l.substring(colon + 1).trim().split("\\s+")) {
                    if (!f.isEmpty()) {
                        flags.add(f);
                    }
                }
                break;
            }
        }
        return flags;
    }

    private static String cpuModel() {
        for (String line : cpuinfo()) {
            if (line.startsWith("model name")) {
                return line.substring(line.indexOf(':') + 1).trim();
            }
        }
        return null;
    }

    private static List<String> cpuinfo() {
        Path p = Paths.get("/proc/cpuinfo");
        try {
            return Files.isReadable(p) ? Files.readAllLines(p, StandardCharsets.UTF_8) : List.of();
        } catch (IOException e) {
            return List.of();
        }
    }
}
