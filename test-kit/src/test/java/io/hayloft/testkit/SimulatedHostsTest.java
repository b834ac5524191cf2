package io.hayloft.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link SimulatedHosts} on real processes: a {@link TinyHttpServer} JVM on each of three hosts
 * (n1 on rack1, n2 and n3 on rack2), asked over HTTP whether it reaches another host. Skips where
 * namespaces cannot be made, fails there with {@code HAYLOFT_REQUIRE_NETNS=1}.
 */
class SimulatedHostsTest {
    private static final int PORT = 8080;
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    static Path dir;
    static SimulatedHosts net;
    static SimulatedHost n1;
    static SimulatedHost n2;
    static SimulatedHost n3;

    @BeforeAll
    static void startHosts() throws Exception {
        SimulatedHosts.Availability a = SimulatedHosts.available();
        assumeTrue(a.usable(), "simulated hosts are skipped: " + a.reason());
        net = SimulatedHosts.create();
        n1 = net.add("n1", "rack1");
        n2 = net.add("n2", "rack2");
        n3 = net.add("n3", "rack2");
        for (SimulatedHost h : List.of(n1, n2, n3)) {
            h.start(TinyHttpServer.command("serve", Integer.toString(PORT)), dir.resolve(h.name() + ".log"));
        }
        for (SimulatedHost h : List.of(n1, n2, n3)) {
            Await.until("the server on " + h + " answers the test JVM", WAIT, () -> reachable(h));
        }
    }

    /** Heals all, and waits until everyone reaches everyone again (a neighbour entry may take a second). */
    @AfterEach
    void healEverything() throws InterruptedException {
        if (net != null) {
            net.healAll();
            Await.until("every host reaches every other and the test JVM reaches all", WAIT,
                    () -> reachable(n1) && reachable(n2) && reachable(n3) && reaches(n1, n2) && reaches(n2, n1)
                            && reaches(n1, n3) && reaches(n3, n1) && reaches(n2, n3) && reaches(n3, n2));
        }
    }

    @AfterAll
    static void closeHosts() throws Exception {
        Closing.all(net);
    }

    /** Whether the test JVM gets a {@code pong} from {@code h}. */
    static boolean reachable(SimulatedHost h) {
        return TinyHttpServer.fetch(h.address(), PORT).equals("ok pong");
    }

    /** Whether {@code from} gets a {@code pong} from {@code to}, asked through {@code from}'s server. */
    static boolean reaches(SimulatedHost from, SimulatedHost to) {
        try {
            String outcome = new String(TinyHttpServer.get(from.address(), PORT, "/fetch?to=" + to.address() + "&port=" + PORT),
                    StandardCharsets.UTF_8);
            return outcome.equals("ok pong");
        } catch (IOException e) {
            throw new AssertionError("the test JVM cannot ask " + from, e);
        }
    }

    /**
     * For a host the test JVM cannot ask: a fresh JVM on {@code from} asks {@code to} for a {@code pong};
     * {@code ok pong} or {@code error ...}.
     */
    static String fetchFromAFreshJvm(SimulatedHost from, SimulatedHost to) throws Exception {
        List<String> cmd = TinyHttpServer.command("fetch", to.address(), Integer.toString(PORT));
        return from.exec(WAIT, cmd.toArray(new String[0])).strip();
    }

    @Test
    void hostsReachEachOtherAndTheTestJvm() throws Exception {
        assertThat(List.of(n1.address(), n2.address(), n3.address())).doesNotHaveDuplicates()
                .allMatch(address -> address.startsWith(net.subnet().replace("0.0/16", "")));
        assertThat(n2.address()).endsWith(".2.1");
        assertThat(n3.address()).endsWith(".2.2");
        assertThat(reaches(n1, n2)).isTrue();
        assertThat(reaches(n2, n1)).isTrue();
        assertThat(reaches(n2, n3)).isTrue();

        // A server in the test JVM, on the test JVM's address, is reachable from the hosts.
        HttpServer server = HttpServer.create(new InetSocketAddress(net.testJvm().address(), PORT), 8);
        server.createContext("/ping", TinyHttpServer::handle);
        server.start();
        try {
            String outcome = new String(TinyHttpServer.get(n1.address(), PORT, "/fetch?to=" + net.testJvm().address() + "&port="
                    + PORT), StandardCharsets.UTF_8);
            assertThat(outcome).isEqualTo("ok pong");
        } finally {
            server.stop(0);
        }
    }

    @Test
    void aCutHostReachesNobodyUntilHealed() throws Exception {
        net.cut(n2);
        assertThat(reaches(n1, n2)).isFalse();
        assertThat(reaches(n3, n2)).as("same rack").isFalse();
        assertThat(reachable(n2)).as("from the test JVM").isFalse();
        assertThat(reaches(n1, n3)).as("the others still talk").isTrue();

        net.heal(n2);
        Await.until("n2 reaches and is reached again", WAIT, () -> reaches(n1, n2) && reachable(n2) && reaches(n2, n3));
    }

    @Test
    void aCutRackKeepsItsHostsTogether() throws Exception {
        net.cutRack("rack2");
        assertThat(reaches(n1, n2)).isFalse();
        assertThat(reaches(n1, n3)).isFalse();
        assertThat(reachable(n3)).as("from the test JVM").isFalse();
        assertThat(fetchFromAFreshJvm(n2, n3)).as("inside the rack").isEqualTo("ok pong");
        assertThat(fetchFromAFreshJvm(n2, n1)).as("out of the rack").startsWith("error");

        net.healRack("rack2");
        // n2's neighbour entry for n1 may still be resolving from the failed try: up to a second more.
        Await.until("n1 and n2 reach each other again", WAIT, () -> reaches(n1, n3) && reaches(n2, n1));
    }

    @Test
    void aPartitionLeavesEachSideTalkingInside() throws Exception {
        net.partition(Set.of(n1), Set.of(n2));
        assertThat(reaches(n1, n2)).isFalse();
        assertThat(reaches(n2, n1)).isFalse();
        assertThat(reaches(n1, n3)).as("n3 is on neither side").isTrue();
        assertThat(reaches(n2, n3)).isTrue();
        assertThat(reachable(n1) && reachable(n2)).as("the test JVM is on neither side").isTrue();
        net.healPartitions();
        Await.until("n1 reaches n2 after the heal", WAIT, () -> reaches(n1, n2) && reaches(n2, n1));

        // The test JVM on n1's side: it still reaches n1, no longer n2 or n3, which still reach each other.
        net.isolate(Set.of(n1, net.testJvm()));
        assertThat(reachable(n1)).isTrue();
        assertThat(reachable(n2)).isFalse();
        assertThat(reachable(n3)).isFalse();
        assertThat(reaches(n1, n2)).isFalse();
        assertThat(reaches(n1, n3)).isFalse();
        assertThat(fetchFromAFreshJvm(n3, n2)).isEqualTo("ok pong");
        assertThat(fetchFromAFreshJvm(n3, n1)).startsWith("error");
        net.healPartitions();
        Await.until("the test JVM reaches n2 and n3 after the heal", WAIT, () -> reachable(n2) && reachable(n3));
    }

    @Test
    void anOpenConnectionStallsInAPartitionAndResumesAfterTheHeal() throws Exception {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(n2.address(), PORT), TinyHttpServer.CONNECT_TIMEOUT_MILLIS);
            s.setSoTimeout(TinyHttpServer.READ_TIMEOUT_MILLIS);
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            byte[] request = ("GET /ping HTTP/1.1\r\nHost: n2\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
            out.write(request);
            assertThat(readResponse(in)).endsWith("pong");

            net.partition(Set.of(net.testJvm()), Set.of(n2));
            out.write(request);
            s.setSoTimeout(300);
            assertThatThrownBy(in::read).as("no answer through the partition").isInstanceOf(SocketTimeoutException.class);

            net.healPartitions();
            s.setSoTimeout((int) WAIT.toMillis());
            assertThat(readResponse(in)).as("the same connection, after TCP retransmits").endsWith("pong");
        }
    }

    /** One response with a body of 4 bytes ({@code pong}) from a keep-alive connection. */
    private static String readResponse(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        while (!(sb.indexOf("\r\n\r\n") >= 0 && sb.length() >= sb.indexOf("\r\n\r\n") + 8)) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("closed after " + sb);
            }
            sb.append((char) b);
        }
        return sb.toString();
    }

    @Test
    void kill9KillsTheJavaProcessItselfInTheNamespace() throws Exception {
        HostProcess p = n3.start(TinyHttpServer.command("serve", "8081"), dir.resolve("n3-8081.log"));
        Await.until("the second server on n3 answers", WAIT,
                () -> TinyHttpServer.fetch(n3.address(), 8081).equals("ok pong"));
        assertThat(Files.readSymbolicLink(Path.of("/proc", Long.toString(p.pid()), "exe")).toString()).endsWith("/java");
        assertThat(Netns.ip("netns", "identify", Long.toString(p.pid())).strip()).isEqualTo(n3.namespace());
        assertThat(Netns.ip("netns", "pids", n3.namespace()).lines()).contains(Long.toString(p.pid()));

        p.kill9();
        assertThat(p.isAlive()).isFalse();
        assertThat(p.exitValue()).isEqualTo(128 + 9);
        assertThat(Netns.ip("netns", "pids", n3.namespace()).lines()).doesNotContain(Long.toString(p.pid()));
        assertThat(TinyHttpServer.fetch(n3.address(), 8081)).startsWith("error").contains("refused");
        assertThat(reachable(n3)).as("the first server lives on").isTrue();
    }

    @Test
    void aCappedLinkIsNoFasterThanTheCap() throws Exception {
        int bytes = 2 << 20;
        long bitsPerSecond = 8_000_000;
        net.capBandwidth(n1, bitsPerSecond);
        long capped = download(n1, bytes);
        // 2 MiB at 8 Mbit/s take 2.1 s; allow for the burst, and assert half of that.
        long floorNanos = (long) bytes * 8 * 1_000_000_000L / bitsPerSecond / 2;
        assertThat(capped).as("nanoseconds for %d bytes at %d bit/s", bytes, bitsPerSecond).isGreaterThan(floorNanos);

        net.uncap(n1);
        long uncapped = download(n1, bytes);
        assertThat(uncapped).as("uncapped, the same bytes take less time").isLessThan(capped);
    }

    private static long download(SimulatedHost h, int bytes) throws IOException {
        long start = System.nanoTime();
        byte[] body = TinyHttpServer.get(h.address(), PORT, "/bytes?n=" + bytes);
        long took = System.nanoTime() - start;
        assertThat(body).hasSize(bytes);
        return took;
    }

    @Test
    void closeDeletesEveryNamespaceAndLinkAndKillsTheProcesses() throws Exception {
        HostProcess sleeper;
        String prefix;
        try (SimulatedHosts other = SimulatedHosts.create()) {
            prefix = other.prefix();
            assertThat(prefix).as("two fixtures never share a prefix").isNotEqualTo(net.prefix());
            SimulatedHost a = other.add("a", "r1");
            other.add("b", "r2");
            sleeper = a.start(List.of("sleep", "600"), dir.resolve("sleep.log"));
            assertThat(names()).anyMatch(n -> n.startsWith(prefix));
            assertThat(sleeper.isAlive()).isTrue();
        }
        assertThat(sleeper.waitFor(WAIT)).isTrue();
        assertThat(names()).noneMatch(n -> n.startsWith(prefix));
        assertThat(reachable(n1)).as("the other fixture is untouched").isTrue();
    }

    @Test
    void removeStaleDeletesWhatAKilledRunLeft() throws Exception {
        // Slot 199 is never handed out, so nothing live uses it: it plays a run killed with SIGKILL.
        String ns = Netns.FAMILY + "199-n1";
        Netns.ip("netns", "add", ns);
        Process orphan = new ProcessBuilder(Netns.ip(), "netns", "exec", ns, "sleep", "600").start();
        try {
            assertThat(SimulatedHosts.removeStale()).contains(Netns.FAMILY + "199").doesNotContain(net.prefix());
            assertThat(orphan.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
            assertThat(Netns.namespaces()).doesNotContain(ns).contains(n1.namespace());
            assertThat(reachable(n1)).isTrue();
        } finally {
            orphan.destroyForcibly();
            Netns.tryIp("netns", "del", ns);
        }
    }

    @Test
    void aJvmThatNeverClosesIsCleanedUpByItsShutdownHookOrAfterAKillByRemoveStale() throws Exception {
        Process exits = new ProcessBuilder(TinyHttpServer.command("leak", "exit"))
                .redirectError(dir.resolve("leak-exit.log").toFile()).start();
        String exited = firstLine(exits);
        assertThat(exits.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(exits.exitValue()).isZero();
        assertThat(names()).as("deleted by the shutdown hook").noneMatch(n -> n.startsWith(exited));

        Process hangs = new ProcessBuilder(TinyHttpServer.command("leak", "hang"))
                .redirectError(dir.resolve("leak-hang.log").toFile()).start();
        String killed = firstLine(hangs);
        hangs.destroyForcibly();
        assertThat(hangs.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(names()).as("SIGKILL leaves the namespaces").anyMatch(n -> n.startsWith(killed));
        SimulatedHosts.removeStale();
        assertThat(names()).noneMatch(n -> n.startsWith(killed));
        assertThat(reachable(n1)).as("this JVM's fixture is untouched").isTrue();
    }

    private static String firstLine(Process p) throws IOException {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line = r.readLine();
            assertThat(line).as("the prefix the child printed").isNotNull().startsWith(Netns.FAMILY);
            return line.strip();
        }
    }

    /** The namespaces and the root namespace's links. */
    private static List<String> names() {
        List<String> names = new ArrayList<>(Netns.namespaces());
        names.addAll(Netns.rootLinks());
        return names;
    }
}
