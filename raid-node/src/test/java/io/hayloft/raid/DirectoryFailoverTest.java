package io.hayloft.raid;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.hayloft.client.DirectoryException;
import io.hayloft.client.DirectoryClient;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PutResult;
import io.hayloft.client.RemoteException;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.cold.ClusterReads;
import io.hayloft.cold.ColdReader;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.testkit.Closing;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every address list is used as a list: with a dead directory address first (a port that refuses
 * connections), the directory client, the client's reads and writes, and the cold reads (the cold
 * reader's stripe maps, store list and delete logs, through the client's {@code ColdReads} and through
 * cold-read's {@link ClusterReads}) go on to the live directory, and later calls start there. Real
 * directory and stores, one erasure-coded volume. And the raid-node's calls over a configured list
 * ({@code directory: a,b,c}) follow a directory follower's "not the leader, ask X" (a stand-in that
 * answers every request as a follower of a replicated directory does: 421 {@code NOT_LEADER} naming
 * the live directory, which the list does not name) to the leader, POSTs included.
 */
class DirectoryFailoverTest {
    @TempDir
    static Path dir;
    static TestCluster cluster;
    static ThreadPoolRunner runner;
    static String dead;
    static int volume;

    @BeforeAll
    static void start() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            dead = "127.0.0.1:" + s.getLocalPort(); // closed: connections are refused
        }
        cluster = new TestCluster(dir, 15);
        volume = cluster.writeVolume(40, 3000);
        runner = new ThreadPoolRunner(2);
        new RaidNode(cluster.raidConfig("rs", 16 << 10), runner).encode(volume);
    }

    @AfterAll
    static void stop() throws Exception {
        Closing.all(runner, cluster);
    }

    /** A transport that counts the attempts per server (the dead one's are refused connections). */
    private static HttpTransport counting(Map<String, AtomicInteger> attempts) {
        return HttpTransport.builder().connectTimeout(Duration.ofSeconds(2)).requestTimeout(Duration.ofSeconds(5))
                .listener(new HttpTransport.Listener() {
                    @Override
                    public void onRequest(String target, String method, int status, RemoteException failure, long nanos) {
                        attempts.computeIfAbsent(target, k -> new AtomicInteger()).incrementAndGet();
                    }
                }).build();
    }

    @Test
    void coldReadsThroughClusterReadsGoOnToTheNextDirectoryAndStayThere() throws Exception {
        Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
        HttpTransport transport = counting(attempts);
        try (ColdReader reader = new ColdReader(new ClusterReads(List.of(dead, cluster.directory.address()), null,
                Duration.ofSeconds(5), transport.clusterRpc()))) {
            cluster.assertColdReads(reader, List.of(), "with the first directory address dead");
        }
        assertThat(attempts.get(dead)).as("the dead address is tried once, then the live one is preferred").hasValue(1);
        assertThat(attempts.get(cluster.directory.address()).get()).isGreaterThan(1);
    }

    @Test
    void theClientReadsColdPhotosAndWritesWithTheFirstDirectoryDead() throws Exception {
        Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
        try (HayloftClient client = HayloftClient.builder().directories(List.of(dead, cluster.directory.address()))
                .listener(new HttpTransport.Listener() {
                    @Override
                    public void onRequest(String target, String method, int status, RemoteException failure, long nanos) {
                        attempts.computeIfAbsent(target, k -> new AtomicInteger()).incrementAndGet();
                    }
                }).build()) {
            for (TestCluster.Photo p : cluster.photos.values()) {
                PhotoId id = PhotoId.parse(p.volume() + "," + p.key() + ",0," + p.cookie());
                assertThat(client.get(id)).as("cold photo %d", p.key()).isEqualTo(p.data());
            }
            byte[] fresh = {0, 1, 2, 3, 4};
            PutResult put = client.put(fresh);
            assertThat(client.get(put.id())).isEqualTo(fresh);
        }
        // The volume map, the cold reads' directory calls and the lease: each list tried the dead address at most once.
        assertThat(attempts.get(dead).get()).isBetween(1, 2);
    }

    /** A stand-in for a replicated directory's follower: every request answered 421 NOT_LEADER naming {@code leader}. */
    private static HttpServer follower(String leader, AtomicInteger asked) throws IOException {
        HttpServer f = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        f.createContext("/", ex -> {
            asked.incrementAndGet();
            ex.getRequestBody().readAllBytes();
            byte[] body = ("{\"error\":{\"code\":230,\"name\":\"NOT_LEADER\",\"message\":\"not the leader\",\"leader\":\""
                    + leader + "\"}}").getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().set("Content-Type", "application/json");
            ex.getResponseHeaders().set(HttpTransport.LEADER_HEADER, leader);
            ex.sendResponseHeaders(421, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        f.start();
        return f;
    }

    @Test
    void theRaidNodesCallsOverAConfiguredListFollowAFollowerToTheLeader() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        HttpServer f = follower(cluster.directory.address(), asked);
        try {
            String followerAddress = "127.0.0.1:" + f.getAddress().getPort();
            RaidConfig config = cluster.raidConfig("rs", 16 << 10);
            config.directory = followerAddress + "," + dead; // the leader is in neither: learned from the answer
            config.validate();
            Cluster c = config.cluster();
            assertThat(c.stores()).hasSize(15);
            assertThat(asked.get()).isEqualTo(1);
            assertThat(c.stripeMap(volume, true).volume()).isEqualTo(volume);
            assertThat(c.volume(volume).id()).isEqualTo(volume);
            // a POST (dead keys) refused by the follower reaches the leader; later calls start at the leader
            assertThat(c.deadKeys(volume, List.of(1L, 2L))).isNotNull();
            assertThat(asked.get()).as("calls after the first start at the leader").isEqualTo(1);

            Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
            try (HayloftClient client = HayloftClient.builder().directory(followerAddress + "," + dead)
                    .listener(new HttpTransport.Listener() {
                        @Override
                        public void onRequest(String target, String method, int status, RemoteException failure, long nanos) {
                            attempts.computeIfAbsent(target, k -> new AtomicInteger()).incrementAndGet();
                        }
                    }).build()) {
                byte[] fresh = {9, 8, 7};
                PutResult put = client.put(fresh); // a lease (POST) through the follower's answer
                assertThat(client.get(put.id())).isEqualTo(fresh);
            }
            assertThat(attempts).doesNotContainKey(dead);
            assertThat(attempts.get(cluster.directory.address()).get()).isGreaterThan(0);
        } finally {
            f.stop(0);
        }
    }

    @Test
    void theDirectoryClientPrefersTheAddressThatAnsweredAndFailsWhenNoneDoes() {
        Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
        HttpTransport transport = counting(attempts);
        DirectoryClient both = new DirectoryClient(transport, List.of(dead, cluster.directory.address()), null);
        assertThat(both.health().join().secured()).isNotNull();
        assertThat(both.volumeMap(null).join().volumes()).isNotEmpty();
        assertThat(both.stores().join()).hasSize(15);
        assertThat(attempts.get(dead)).hasValue(1);
        assertThat(attempts.get(cluster.directory.address())).hasValue(3);

        DirectoryClient none = new DirectoryClient(transport, List.of(dead, dead.replace("127.0.0.1", "localhost")), null);
        Throwable t = catchThrowable(() -> none.health().join());
        assertThat(t.getCause()).isInstanceOf(DirectoryException.class);
        assertThat(((RemoteException) t.getCause()).kind()).isEqualTo(RemoteException.Kind.UNREACHABLE);
    }
}
