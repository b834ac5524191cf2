package io.hayloft.erasure.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a library user gets under JVM flags this test JVM does not have, checked in real child JVMs
 * running {@link KernelProbe}: no Vector API module means the scalar kernel, silently and correctly;
 * the other vector variants (128-bit species, no unroll) compute the same bytes as the scalar kernel.
 */
class VectorKernelProcessTest {

    /** Points the ISA-L loader at a library that is not there, so these probes see Java backends only. */
    static final String NO_NATIVE = "-Dhayloft.isal.library=/nonexistent/libhayloft-isal.so";

    @TempDir
    Path dir;

    @Test
    void withoutTheVectorModuleTheScalarKernelIsChosen() throws Exception {
        String line = probe(List.of(NO_NATIVE), "report");
        assertThat(line).contains("best=java").contains("available=[java]")
                .contains("vector=module jdk.incubator.vector is not in the boot layer")
                .contains("--add-modules jdk.incubator.vector");
    }

    @Test
    void withTheModuleTheVectorKernelIsChosen() throws Exception {
        String line = probe(List.of("--add-modules", "jdk.incubator.vector"), "report");
        // ISA-L may be chosen first when a native backend is built; vector must be available either way.
        assertThat(line).containsPattern("available=\\[.*vector.*java\\]");
    }

    @Test
    void narrowSpeciesWithoutUnrollMatchesScalar() throws Exception {
        String line = probe(List.of("--add-modules", "jdk.incubator.vector", "-Dhayloft.erasure.vector.variant=x1/128"),
                "check");
        assertThat(line).startsWith("PROBE ok").contains("128-bit, 1x unroll");
    }

    @Test
    void preferredSpeciesWithUnrollMatchesScalar() throws Exception {
        String line = probe(List.of("--add-modules", "jdk.incubator.vector", "-Dhayloft.erasure.vector.variant=x2/preferred"),
                "check");
        assertThat(line).startsWith("PROBE ok").contains("2x unroll");
    }

    @Test
    void badVariantIsReportedNotGuessed() throws Exception {
        String line = probe(List.of(NO_NATIVE, "--add-modules", "jdk.incubator.vector", "-Dhayloft.erasure.vector.variant=x3"),
                "report");
        assertThat(line).contains("best=java").contains("bad hayloft.erasure.vector.variant 'x3'");
    }

    /** Runs the probe in a child JVM with {@code jvmArgs}, returns its {@code PROBE} line, fails on a non-zero exit. */
    private String probe(List<String> jvmArgs, String mode) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmArgs);
        cmd.add("-Dhayloft.erasure.backend=auto");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(KernelProbe.class.getName());
        cmd.add(mode);
        File log = dir.resolve("probe-" + mode + "-" + System.nanoTime() + ".log").toFile();
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log).start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("probe did not finish in 120 s: " + cmd);
        }
        String output = Files.readString(log.toPath(), StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as("probe exit code; output:%n%s", output).isZero();
        return output.lines().filter(l -> l.startsWith("PROBE ")).findFirst()
                .orElseThrow(() -> new AssertionError("no PROBE line in:\n" + output));
    }
}
