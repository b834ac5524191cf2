package io.hayloft.erasure.kernel.isal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Backend selection in a fresh JVM each time (the choice is made once per JVM): a native library
 * that cannot load leaves its reason and the pure-Java path takes over; forcing native then fails
 * with that reason; forcing java works even when native loads. Output is what {@code hayloft ec info}
 * prints ({@link io.hayloft.erasure.kernel.BackendInfo}).
 */
class NativeFallbackTest {

    private static String run(String... props) throws IOException, InterruptedException {
        Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
        List<String> cmd = new ArrayList<>();
        cmd.add(java.toString());
        cmd.addAll(List.of(props));
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "io.hayloft.erasure.kernel.BackendInfo"));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("HAYLOFT_EC_BACKEND");
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("BackendInfo finished").isTrue();
        assertThat(p.exitValue()).as("exit code; output:%n%s", new String(out, StandardCharsets.UTF_8)).isZero();
        return new String(out, StandardCharsets.UTF_8);
    }

    @Test
    void brokenNativeFallsBackToJavaAndSaysWhy() throws Exception {
        String out = run("-Dhayloft.isal.library=/nonexistent/libhayloft-isal.so");
        assertThat(out).doesNotContain("backend: native")
                .containsPattern("backend: (java|vector) ")
                .contains("native: off: hayloft.isal.library=/nonexistent/libhayloft-isal.so is not a file")
                .contains("requested: auto")
                .contains("cpu features for isa-l:");
    }

    @Test
    void forcingAnUnavailableNativeBackendFailsWithTheReason() throws Exception {
        String out = run("-Dhayloft.isal.library=/nonexistent/libhayloft-isal.so", "-Dhayloft.erasure.backend=native");
        assertThat(out).contains("backend: none: erasure backend 'native' was requested but is not available: "
                + "hayloft.isal.library=/nonexistent/libhayloft-isal.so is not a file");
    }

    @Test
    void forcingJavaWorksWhenNativeLoads() throws Exception {
        IsalKernel isal = NativeOrSkip.kernel();
        String out = run("-Dhayloft.erasure.backend=java");
        assertThat(out).contains("backend: java (").contains("requested: java")
                .contains("native: loads, but not selected (requested java)")
                .contains("isa-l: " + isal.isalVersion())
                .contains("isa-l kernels: " + isal.kernelFamily());
    }

    @Test
    void autoPicksNativeWhenItLoads() throws Exception {
        IsalKernel isal = NativeOrSkip.kernel();
        String out = run();
        assertThat(out).contains("backend: native (" + isal.description() + ")");
    }
}
