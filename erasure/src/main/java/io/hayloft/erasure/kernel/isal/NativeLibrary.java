package io.hayloft.erasure.kernel.isal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.Locale;
import java.util.Properties;

/**
 * Loads {@code libhayloft-isal.so} once per JVM and remembers why it failed, if it did.
 *
 * <p>Where from, first match wins:
 * <ol>
 *   <li>the path in system property {@value #PATH_PROPERTY} (a {@code libisal.so.2} next to it is
 *       loaded first, else the system's is used);</li>
 *   <li>the jar's resources {@code native/<os>-<arch>/}: {@code libhayloft-isal.so}, and
 *       {@code libisal.so.2} when the shim was linked dynamically, extracted to a fresh private
 *       ({@code rwx------}) directory under {@code java.io.tmpdir}, loaded, then deleted.</li>
 * </ol>
 * After loading, a one-vector self-test (RS(3,2) parity from the test vectors of docs/erasure.md) must match, so a broken
 * build never serves wrong bytes.
 *
 * <p>Thread-safe: {@link #get()} is synchronized and loads at most once.
 */
final class NativeLibrary {

    /** System property: absolute path of a {@code libhayloft-isal.so} to load instead of the jar's. */
    static final String PATH_PROPERTY = "hayloft.isal.library";

    static final String SHIM = "libhayloft-isal.so";
    static final String ISAL = "libisal.so.2";

    /** What was loaded: the facts {@code hayloft ec info} prints. */
    static final class Info {
        final String version;
        final String source;
        final String linkage;
        final String dispatched;
        final String libraryFile;
        final String loadedFrom;

        Info(String version, String source, String linkage, String dispatched, String libraryFile, String loadedFrom) {
            this.version = version;
            this.source = source;
            this.linkage = linkage;
            this.dispatched = dispatched;
            this.libraryFile = libraryFile;
            this.loadedFrom = loadedFrom;
        }
    }

    private static Info info;
    private static String failure;

    private NativeLibrary() {
    }

    /**
     * The loaded library's facts.
     *
     * @throws IllegalStateException with the reason when the library cannot be loaded (the same
     *     reason on every call; loading is attempted once)
     */
    static synchronized Info get() {
        if (info == null && failure == null) {
            try {
                info = load();
            } catch (IOException | UncheckedIOException e) {
                failure = "cannot extract " + SHIM + ": " + e.getMessage()
                        + " (set -D" + PATH_PROPERTY + "=/path/to/" + SHIM + " if java.io.tmpdir is noexec)";
            } catch (UnsatisfiedLinkError | IllegalStateException | SecurityException e) {
                failure = e.getMessage();
            }
        }
        if (failure != null) {
            throw new IllegalStateException(failure);
        }
        return info;
    }

    /** {@code linux-x86_64}, {@code linux-aarch64}, ...: the resource directory for this JVM. */
    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        String o = os.startsWith("linux") ? "linux" : os.replaceAll("[^a-z0-9]", "");
        String a = arch.equals("amd64") || arch.equals("x86_64") ? "x86_64"
                : arch.equals("aarch64") || arch.equals("arm64") ? "aarch64" : arch;
        return o + "-" + a;
    }

    private static Info load() throws IOException {
        String explicit = System.getProperty(PATH_PROPERTY);
        Properties props = new Properties();
        String loadedFrom;
        if (explicit != null && !explicit.isBlank()) {
            Path shim = Paths.get(explicit).toAbsolutePath();
            if (!Files.isRegularFile(shim)) {
                throw new IllegalStateException(PATH_PROPERTY + "=" + explicit + " is not a file");
            }
            Path dir = shim.getParent();
            if (Files.isRegularFile(dir.resolve(ISAL))) {
                System.load(dir.resolve(ISAL).toString());
            }
            Path p = dir.resolve("isal.properties");
            if (Files.isRegularFile(p)) {
                try (InputStream in = Files.newInputStream(p)) {
                    props.load(in);
                }
            }
            System.load(shim.toString());
            loadedFrom = shim.toString();
        } else {
            String platform = platform();
            String base = "/native/" + platform + "/";
            URL shimUrl = NativeLibrary.class.getResource(base + SHIM);
            if (shimUrl == null) {
                throw new IllegalStateException(SHIM + " not in jar for " + platform
                        + " (the build skips native code without gcc and libisal-dev; see 'native:' in its output)");
            }
            try (InputStream in = NativeLibrary.class.getResourceAsStream(base + "isal.properties")) {
                if (in != null) {
                    props.load(in);
                }
            }
            Path dir = Files.createTempDirectory("hayloft-isal-",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            try {
                Path isal = extract(base + ISAL, dir.resolve(ISAL));
                Path shim = extract(base + SHIM, dir.resolve(SHIM));
                if (isal != null) {
                    System.load(isal.toString());
                }
                System.load(shim.toString());
            } finally {
                // Linux keeps a loaded library mapped after its file is deleted.
                Files.deleteIfExists(dir.resolve(SHIM));
                Files.deleteIfExists(dir.resolve(ISAL));
                Files.deleteIfExists(dir);
            }
            loadedFrom = shimUrl.toString();
        }
        selfTest();
        return new Info(
                props.getProperty("isal.version", IsalNative.version()),
                props.getProperty("isal.source", "unknown"),
                props.getProperty("isal.linkage", "unknown"),
                IsalNative.dispatched(),
                IsalNative.libraryFile(),
                loadedFrom);
    }

    private static Path extract(String resource, Path to) throws IOException {
        try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
            if (in == null) {
                return null;
            }
            Files.copy(in, to, StandardCopyOption.REPLACE_EXISTING);
            return to;
        }
    }

    /** RS(3,2), one byte per unit, d_j = j+1: parity must be f6 9a (docs/erasure.md, test vectors). */
    private static void selfTest() {
        byte[] cauchy = {(byte) 0xf4, (byte) 0x8e, 0x01, 0x47, (byte) 0xa7, 0x7a};
        long h = IsalNative.newTables(2, 3, cauchy);
        try {
            byte[][] data = new byte[3][64];
            for (int j = 0; j < 3; j++) {
                Arrays.fill(data[j], (byte) (j + 1));
            }
            byte[][] parity = new byte[2][64];
            long heap = IsalNative.HEAP;
            IsalNative.apply(h, new Object[] {data[0], data[1], data[2], parity[0], parity[1]},
                    new long[] {heap, heap, heap, heap, heap}, 64, false);
            if (parity[0][63] != (byte) 0xf6 || parity[1][0] != (byte) 0x9a) {
                throw new IllegalStateException(String.format(
                        "ISA-L self-test failed: RS(3,2) parity %02x %02x, expected f6 9a", parity[0][63], parity[1][0]));
            }
        } finally {
            IsalNative.freeTables(h);
        }
    }
}
