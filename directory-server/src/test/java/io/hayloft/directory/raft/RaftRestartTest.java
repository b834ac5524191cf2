package io.hayloft.directory.raft;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.DirectoryServer;
import io.hayloft.directory.StoreAdmin;
import io.hayloft.format.wire.Wire;
import io.hayloft.testkit.Await;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
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
    private LocalGroup group;

    private static final StoreAdmin STORES = AcceptingStores.INSTANCE;

    @AfterEach
    void close() {
        if (group != null) {
            group.close();
        }
    }

    private DirectoryServer leader() throws InterruptedException {
        return group.server(group.awaitLeader(Duration.ofSeconds(30)));
    }

    @Test
    void aRestartedReplicaReplaysItsLogAndCatchesUp() throws Exception {
        group = LocalGroup.builder(3, () -> {
            DirectoryConfig c = new DirectoryConfig();
            c.replication = 2;
            c.probeIntervalMillis = 100_000;
            c.raft = new DirectoryConfig.Raft();
            c.raft.electionTimeoutMillis = 300;
            return c;
        }, dir).storeAdmin(STORES).start();
        int first = group.awaitLeader(Duration.ofSeconds(30));
        DirectoryServer leader = group.server(first);
        for (int s = 1; s <= 5; s++) {
            leader.directory().heartbeat(new Wire.Heartbeat("s" + s, "127.0.0.1:" + (20000 + s), "r" + s, 1L << 40, 1L << 39, List.of()));
        }
        int victim = (first + 1) % 3;
        Await.until("the follower applied the five stores", () -> group.server(victim).directory().stores().size() == 5);
        group.stop(victim);
        for (int s = 6; s <= 8; s++) {
            leader().directory().heartbeat(new Wire.Heartbeat("s" + s, "127.0.0.1:" + (20000 + s), "r" + s, 1L << 40, 1L << 39, List.of()));
        }
        group.start(victim);
        Await.until("the restarted replica applied what it missed", Duration.ofSeconds(30),
                () -> group.server(victim).directory().stores().size() == 8);
        long applied = leader().changeLog().appliedIndex();
        Await.until("the restarted replica applies as far as the leader", Duration.ofSeconds(30),
                () -> group.appliedIndex(victim) >= applied);
        assertThat(group.server(victim).changeLog().group().leader()).isNotNull();
    }
}
