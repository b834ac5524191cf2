package io.hayloft.cli.cluster;

import java.nio.file.Files;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PutResult;
import io.hayloft.format.wire.Wire;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real {@code hayloft cluster} process killed with SIGKILL (no shutdown hook, no RocksDB close,
 * no .idx flush), then started again on the same data: every acknowledged photo is still there and
 * the directory's key allocator never hands out a key it handed out before the kill.
 */
class KillNineTest {
    @TempDir
    Path dir;

    private Process process;

    @AfterEach
    void stop() throws Exception {
        if (process != null && process.isAlive()) {
            process.destroyForcibly().waitFor(20, TimeUnit.SECONDS);
        }
    }

    /** Starts the cluster process and returns the directory address it prints. */
    private String startCluster() throws Exception {
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        process = new ProcessBuilder(javaBin, "-cp", System.getProperty("java.class.path"), "io.hayloft.cli.Hayloft",
                "cluster", "--dir", dir.toString(), "--stores", "3", "--racks", "3", "--port", "0")
                .redirectError(ProcessBuilder.Redirect.appendTo(dir.resolve("cluster.log").toFile())).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> address = CompletableFuture.supplyAsync(() -> {
            try {
                String directory = null;
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    if (line.startsWith("DIRECTORY ")) {
                        directory = line.substring("DIRECTORY ".length()).trim();
                    }
                    if (line.equals("READY")) {
                        return directory;
                    }
                }
                int exit = process.waitFor();
                String log = Files.readString(dir.resolve("cluster.log"));
                throw new IllegalStateException("cluster process ended before READY (exit " + exit + "): "
                        + log.substring(Math.max(0, log.length() - 3000)));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        return address.get(60, TimeUnit.SECONDS);
    }

    private void kill9() throws Exception {
        process.destroyForcibly(); // SIGKILL on Linux
        assertThat(process.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).isEqualTo(137);
    }

    @Test
    void nothingAcknowledgedIsLostAndNoKeyIsReused() throws Exception {
        Random random = new Random(7);
        List<PutResult> stored = new ArrayList<>();
        List<byte[]> data = new ArrayList<>();
        long maxKey = -1;
        for (int round = 0; round < 2; round++) {
            String directory = startCluster();
            try (HayloftClient client = HayloftClient.builder().directory(directory)
                    .requestTimeout(Duration.ofSeconds(10)).build()) {
                for (int i = 0; i < stored.size(); i++) {
                    assertThat(client.get(stored.get(i).id())).as("photo %s after kill -9", stored.get(i).id())
                            .isEqualTo(data.get(i));
                }
                // Keys handed out but never used count too: a lease without a write.
                Wire.Lease wasted = Futures.await(client.directory().lease(500, List.of()));
                long first = wasted.first();
                assertThat(first).as("first key after kill -9").isGreaterThan(maxKey);
                maxKey = first + wasted.count() - 1;
                List<byte[]> batch = new ArrayList<>();
                for (int i = 0; i < 50; i++) {
                    byte[] b = new byte[200 + random.nextInt(2000)];
                    random.nextBytes(b);
                    batch.add(b);
                }
                List<PutResult> put = client.putAll(batch);
                for (PutResult p : put) {
                    assertThat(p.id().key()).isGreaterThan(first + 499);
                    maxKey = Math.max(maxKey, p.id().key());
                }
                stored.addAll(put);
                data.addAll(batch);
            }
            kill9();
        }
        String directory = startCluster();
        try (HayloftClient client = HayloftClient.builder().directory(directory).build()) {
            for (int i = 0; i < stored.size(); i++) {
                assertThat(client.get(stored.get(i).id())).isEqualTo(data.get(i));
            }
            assertThat(Futures.await(client.directory().lease(1, List.of())).first()).isGreaterThan(maxKey);
        }
    }
}
