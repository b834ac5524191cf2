package io.hayloft.directory.raft;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.DirectoryServer;
import io.hayloft.directory.StoreAdmin;
import io.hayloft.format.wire.Wire;
import io.hayloft.testkit.Await;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A replica restarted with its data (no snapshot taken yet) rejoins its group: Ratis replays its log
 * from the start, below the index its database already holds, and the replica applies what it missed.
 * (Before the fix, the replay's first configuration entry moved the state machine's applied index
 * back, Ratis' check failed, the state machine stopped and the replica never rejoined.)
 */
class RaftRestartTest {
    @TempDir
    Path dir;
    private final List<DirectoryServer> servers = new ArrayList<>();
    private final List<DirectoryConfig.Peer> peers = new ArrayList<>();

    private static final StoreAdmin STORES = new StoreAdmin() {
        @Override
        public CompletableFuture<Void> createVolume(String address, int volume) {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<Void> probe(String address, int volume) {
            return CompletableFuture.completedFuture(null);
        }
    };

    @AfterEach
    void close() {
        servers.forEach(s -> {
            if (s != null) {
                s.close();
            }
        });
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private DirectoryConfig config(int i) {
        DirectoryConfig c = new DirectoryConfig();
        c.dataDir = dir.resolve("n" + (i + 1)).toString();
        c.init = true;
        c.replication = 2;
        c.probeIntervalMillis = 100_000;
        c.raft = new DirectoryConfig.Raft();
        c.raft.id = "n" + (i + 1);
        c.raft.peers = peers;
        c.raft.electionTimeoutMillis = 300;
        return c;
    }

    private DirectoryServer leader() throws InterruptedException {
        DirectoryServer[] found = {null};
        Await.until("one replica leads", Duration.ofSeconds(30), () -> {
            for (DirectoryServer s : servers) {
                if (s != null && s.changeLog().leads()) {
                    found[0] = s;
                    return true;
                }
            }
            return false;
        });
        return found[0];
    }

    @Test
    void aRestartedReplicaReplaysItsLogAndCatchesUp() throws Exception {
        for (int i = 0; i < 3; i++) {
            peers.add(new DirectoryConfig.Peer("n" + (i + 1), "127.0.0.1:" + freePort(), "127.0.0.1:" + freePort()));
        }
        List<CompletableFuture<DirectoryServer>> starting = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            DirectoryConfig c = config(i);
            starting.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return DirectoryServer.start(c, STORES);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        for (CompletableFuture<DirectoryServer> f : starting) {
            servers.add(f.get());
        }
        DirectoryServer leader = leader();
        for (int s = 1; s <= 5; s++) {
            leader.directory().heartbeat(new Wire.Heartbeat("s" + s, "127.0.0.1:" + (20000 + s), "r" + s, 1L << 40, 1L << 39, List.of()));
        }
        int victim = (servers.indexOf(leader) + 1) % 3;
        Await.until("the follower applied the five stores", () -> servers.get(victim).directory().stores().size() == 5);
        servers.get(victim).close();
        servers.set(victim, null);
        for (int s = 6; s <= 8; s++) {
            leader().directory().heartbeat(new Wire.Heartbeat("s" + s, "127.0.0.1:" + (20000 + s), "r" + s, 1L << 40, 1L << 39, List.of()));
        }
        servers.set(victim, DirectoryServer.start(config(victim), STORES));
        Await.until("the restarted replica applied what it missed", Duration.ofSeconds(30),
                () -> servers.get(victim).directory().stores().size() == 8);
        long applied = leader().changeLog().appliedIndex();
        Await.until("the restarted replica applies as far as the leader", Duration.ofSeconds(30),
                () -> servers.get(victim).changeLog().appliedIndex() >= applied);
        assertThat(servers.get(victim).changeLog().group().leader()).isNotNull();
    }
}
