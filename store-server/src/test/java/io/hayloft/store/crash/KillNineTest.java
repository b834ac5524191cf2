package io.hayloft.store.crash;

import java.io.IOException;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real store server process, killed with SIGKILL in the middle of a write loop: every write
 * acknowledged before the kill must be readable and intact after a restart.
 */
class KillNineTest {
    @TempDir
    Path dir;

    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    record Server(Process process, int port) {
    }

    private Server start() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                "io.hayloft.store.StoreMain", "dataDirs=" + dir, "host=127.0.0.1", "port=0", "fsync=always",
                "volumeSizeLimit=268435456", "diskThreads=8");
        pb.redirectErrorStream(true);
        Process p = pb.start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line;
        int port = -1;
        List<String> seen = new ArrayList<>();
        while ((line = out.readLine()) != null) {
            seen.add(line);
            if (line.startsWith("PORT ")) {
                port = Integer.parseInt(line.substring(5).trim());
                break;
            }
        }
        assertThat(port).as("server output: %s", seen).isPositive();
        Thread drain = new Thread(() -> {
            try {
                while (out.readLine() != null) {
                    // keep the pipe empty
                }
            } catch (IOException ignored) {
                // the process died
            }
        });
        drain.setDaemon(true);
        drain.start();
        return new Server(p, port);
    }

    private HttpResponse<byte[]> send(int port, String method, String path, byte[] body) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(20))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body))
                .build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    static byte[] payload(long key) {
        Random r = new Random(key);
        byte[] b = new byte[100 + r.nextInt(20_000)];
        r.nextBytes(b);
        return b;
    }

    @Test
    void everyAcknowledgedWriteSurvivesSigkill() throws Exception {
        Random rnd = new Random();
        ConcurrentLinkedQueue<Long> acked = new ConcurrentLinkedQueue<>();
        for (int round = 0; round < 2; round++) {
            Server s = start();
            if (round == 0) {
                assertThat(send(s.port(), "POST", "/admin/volumes/1", new byte[0]).statusCode()).isEqualTo(201);
            }
            int killAfter = 100 + rnd.nextInt(400);
            CountDownLatch enough = new CountDownLatch(killAfter);
            AtomicBoolean dead = new AtomicBoolean();
            List<Thread> writers = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                final long base = (round * 10L + w) << 32;
                Thread t = new Thread(() -> {
                    for (long i = 0; !dead.get(); i++) {
                        long key = base + i;
                        try {
                            HttpResponse<byte[]> r = send(s.port(), "PUT", "/1/" + key + "/0?cookie=" + Long.toHexString(key ^ 0x5555),
                                    payload(key));
                            if (r.statusCode() == 201) {
                                acked.add(key);
                                enough.countDown();
                            }
                        } catch (Exception e) {
                            return; // the server was killed
                        }
                    }
                });
                t.start();
                writers.add(t);
            }
            assertThat(enough.await(60, TimeUnit.SECONDS)).as("writes acknowledged before the kill").isTrue();
            s.process().destroyForcibly();
            assertThat(s.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
            dead.set(true);
            for (Thread t : writers) {
                t.join(30_000);
                assertThat(t.isAlive()).isFalse();
            }
            Server after = start();
            try {
                for (long key : acked) {
                    HttpResponse<byte[]> r = send(after.port(), "GET", "/1/" + key + "/0?cookie=" + Long.toHexString(key ^ 0x5555), null);
                    assertThat(r.statusCode()).as("acknowledged key %d", key).isEqualTo(200);
                    assertThat(r.body()).as("acknowledged key %d", key).isEqualTo(payload(key));
                }
            } finally {
                after.process().destroyForcibly();
                after.process().waitFor(30, TimeUnit.SECONDS);
            }
        }
        assertThat(acked.size()).isGreaterThanOrEqualTo(200);
    }
}
