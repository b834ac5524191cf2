package io.hayloft.raid;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.DirectoryServer;
import io.hayloft.directory.StoreAdmin;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.VolumeState;
import io.hayloft.format.wire.Wire;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A volume whose creation failed on every store it was placed on (all of them died meanwhile, as in
 * a whole-cluster crash) stays listed READ_ONLY with no replica: there is nothing to encode, so the
 * raid-node's backlog leaves it out instead of failing on it at every pass for ever ("no replica is
 * on a store that is up (replicas [])": found by the life-cycle checker with a directory group, seed 2).
 */
class EmptyVolumeBacklogTest {

    /** Every volume creation fails (the store died); probes pass. */
    private static final StoreAdmin DEAD_ON_CREATE = new StoreAdmin() {
        @Override
        public CompletableFuture<Void> createVolume(String address, int volume) {
            return CompletableFuture.failedFuture(new IOException(address + " cannot connect"));
        }

        @Override
        public CompletableFuture<Void> probe(String address, int volume) {
            return CompletableFuture.completedFuture(null);
        }
    };

    @TempDir
    Path dir;

    @Test
    void aVolumeMadeOnNoStoreIsNotInTheBacklog() throws Exception {
        DirectoryConfig d = new DirectoryConfig();
        d.dataDir = dir.resolve("directory").toString();
        d.port = 0;
        d.init = true;
        d.replication = 3;
        d.probeIntervalMillis = 100_000;
        try (DirectoryServer directory = DirectoryServer.start(d, DEAD_ON_CREATE)) {
            for (int i = 0; i < 3; i++) {
                directory.directory().heartbeat(new Wire.Heartbeat("s" + i, "127.0.0.1:" + (20000 + i), "rack-" + i, 1L << 40,
                        1L << 39, List.of()));
            }
            assertThatThrownBy(() -> directory.directory().createVolumes(1)).hasMessageContaining("creating the replica");
            List<VolumeInfo> all = directory.directory().volumes();
            assertThat(all).hasSize(1);
            assertThat(all.get(0).state()).isEqualTo(VolumeState.READ_ONLY);
            assertThat(all.get(0).replicas()).isEmpty();

            RaidConfig c = new RaidConfig();
            c.directory = directory.address();
            c.minAgeMillis = 0;
            c.spoolDir = dir.toString();
            try (ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
                assertThat(new RaidNode(c.validate(), runner).backlog()).isEmpty();
            }
        }
    }
}
