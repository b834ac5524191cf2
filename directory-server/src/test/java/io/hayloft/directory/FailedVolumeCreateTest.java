package io.hayloft.directory;

import io.hayloft.format.directory.VolumeState;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.format.wire.Wire;
import io.hayloft.directory.meta.MetaStore;
import io.hayloft.format.directory.VolumeInfo;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A volume whose creation failed on one store keeps only the replicas that were made: the health
 * checker probes every listed replica, and one that never existed would fail its store for ever
 * (found by the life-cycle checker: a store lost power while its replica was being created).
 */
class FailedVolumeCreateTest {

    @TempDir
    Path dir;

    @Test
    void aReplicaThatWasNeverCreatedIsNotListed() {
        StoreAdmin stores = new StoreAdmin() {
            @Override
            public CompletableFuture<Void> createVolume(String address, int volume) {
                return address.endsWith(":3") ? CompletableFuture.failedFuture(new IllegalStateException("power cut"))
                        : CompletableFuture.completedFuture(null);
            }

            @Override
            public CompletableFuture<Void> probe(String address, int volume) {
                return CompletableFuture.completedFuture(null);
            }
        };
        DirectoryConfig config = new DirectoryConfig();
        config.replication = 3;
        config.minWritableVolumes = 0;
        try (MetaStore meta = MetaStore.open(dir, true)) {
            Directory d = new Directory(config, meta, stores, Clock.systemUTC());
            for (int i = 1; i <= 3; i++) {
                d.heartbeat(new Wire.Heartbeat("s" + i, "127.0.0.1:" + i, "rack-" + i, 1L << 40, 1L << 40, List.of()));
            }
            assertThatThrownBy(() -> d.createVolumes(1)).hasMessageContaining("creating the replica on store s3 failed");
            VolumeInfo v = d.volumes().get(0);
            assertThat(v.state()).isEqualTo(VolumeState.READ_ONLY);
            assertThat(v.replicas()).containsExactlyInAnyOrder("s1", "s2");
        }
    }
}
