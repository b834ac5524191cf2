package io.hayloft.cli.cluster;

import java.time.Duration;
import java.util.concurrent.CopyOnWriteArrayList;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.hayloft.client.DirectoryClient;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PartialFailureException;
import io.hayloft.client.PutResult;
import io.hayloft.client.RemoteException;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.testkit.Closing;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store's address taken over by something that answers garbage (a raw socket that replies with a
 * non-HTTP line): reads fail over to the healthy replicas, a put names the garbage replica with a
 * BAD_RESPONSE error, and nothing acknowledged is lost. Also a directory list whose first address
 * is dead.
 */
class GarbageStoreTest {
    @TempDir
    Path dir;

    private EmbeddedCluster cluster;
    private HayloftClient client;
    private ServerSocket garbage;
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() throws Exception {
        Closing.all(garbage, Closing.each(accepted), client, cluster);
    }

    /** Answers every connection with a garbage line on the given port, until closed. */
    private void answerGarbageOn(int port) throws IOException {
        serve(port, true);
    }

    /** Accepts connections on the port and reads, but never answers (a hung store). */
    private void hangOn(int port) throws IOException {
        serve(port, false);
    }

    private void serve(int port, boolean answer) throws IOException {
        garbage = new ServerSocket();
        garbage.setReuseAddress(true);
        garbage.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        Thread t = new Thread(() -> {
            while (!garbage.isClosed()) {
                try {
                    Socket s = garbage.accept();
                    accepted.add(s);
                    InputStream in = s.getInputStream();
                    in.read(new byte[8192]);
                    if (answer) {
                        OutputStream out = s.getOutputStream();
                        out.write("GARBAGE \u0000\u0001 not http\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
                        out.flush();
                        s.close();
                    }
                } catch (IOException e) {
                    // closed
                }
            }
        }, "garbage-store");
        t.setDaemon(true);
        t.start();
    }

    @Test
    void readsFailOverAndPutsNameTheGarbageReplica() throws Exception {
        cluster = EmbeddedCluster.start(ClusterOptions.of(dir).withStores(3, 3).withFsync(false).withTiming(100, 60_000, 3));
        client = cluster.newClient();
        byte[] data = new byte[5000];
        new Random(1).nextBytes(data);
        PutResult r = client.put(data);
        String victim = client.stat(r.id()).replicas().get(0);
        int index = cluster.storeIndex(victim);
        cluster.stopStore(index);
        answerGarbageOn(Integer.parseInt(victim.substring(victim.lastIndexOf(':') + 1)));

        for (int i = 0; i < 5; i++) {
            assertThat(client.get(r.id())).isEqualTo(data);
        }
        RemoteException direct = (RemoteException) catchThrowable(() -> Futures.await(client.stores().read(victim, r.id())));
        assertThat(direct.kind()).isEqualTo(RemoteException.Kind.BAD_RESPONSE);
        assertThat(direct.getMessage()).contains(victim);

        Throwable t = catchThrowable(() -> client.put(new byte[100]));
        assertThat(t).isInstanceOf(PartialFailureException.class);
        PartialFailureException e = (PartialFailureException) t;
        assertThat(e.failures()).containsOnlyKeys(victim);
        assertThat(e.failures().get(victim).kind()).isEqualTo(RemoteException.Kind.BAD_RESPONSE);
        assertThat(e.succeeded()).hasSize(2);

        garbage.close();
        garbage = null;
        cluster.startStore(index);
        assertThat(Futures.await(client.stores().read(victim, r.id()))).isEqualTo(data);
    }

    @Test
    void readsFailOverPastAStoreThatNeverAnswers() throws Exception {
        cluster = EmbeddedCluster.start(ClusterOptions.of(dir).withStores(3, 3).withFsync(false).withTiming(100, 60_000, 3));
        try (HayloftClient c = HayloftClient.builder().directory(cluster.directoryAddress())
                .requestTimeout(Duration.ofMillis(500)).build()) {
            byte[] data = {9, 8, 7, 6};
            PutResult r = c.put(data);
            String victim = c.stat(r.id()).replicas().get(0);
            cluster.stopStore(cluster.storeIndex(victim));
            hangOn(Integer.parseInt(victim.substring(victim.lastIndexOf(':') + 1)));
            for (int i = 0; i < 3; i++) {
                assertThat(c.get(r.id())).isEqualTo(data);
            }
            RemoteException hung = (RemoteException) catchThrowable(() -> Futures.await(c.stores().read(victim, r.id())));
            assertThat(hung.kind()).isEqualTo(RemoteException.Kind.TIMEOUT);
        }
    }

    @Test
    void aDeadFirstDirectoryAddressFailsOverToTheNext() throws Exception {
        cluster = EmbeddedCluster.start(ClusterOptions.of(dir).withStores(3, 3).withFsync(false).withTiming(100, 60_000, 3));
        int dead;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            dead = s.getLocalPort();
        }
        try (HayloftClient c = HayloftClient.builder().directory("127.0.0.1:" + dead, cluster.directoryAddress()).build()) {
            byte[] b = {1, 2, 3};
            PutResult r = c.put(b);
            assertThat(c.get(r.id())).isEqualTo(b);
        }
        DirectoryClient only = new DirectoryClient(HttpTransport.create(), List.of("127.0.0.1:" + dead), null);
        RemoteException e = (RemoteException) catchThrowable(() -> Futures.await(only.lease(1, List.of())));
        assertThat(e.kind()).isEqualTo(RemoteException.Kind.UNREACHABLE);
        assertThat(e.getMessage()).contains("127.0.0.1:" + dead).contains("POST /v1/leases");
    }
}
