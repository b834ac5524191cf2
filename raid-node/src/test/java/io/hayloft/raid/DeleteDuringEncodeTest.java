package io.hayloft.raid;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.common.wire.StripeMap;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A photo of a sealed volume deleted while the volume is being encoded, after its stripe was cut
 * and before the encode checks the index it built against the replica's (found by the concurrent
 * life-cycle checker, {@code hayloft bench chaos --clients 8}, seed 1): the encode commits, the
 * deleted photo reads as missing, every other photo reads back; on both encode paths.
 */
class DeleteDuringEncodeTest {

    @TempDir
    Path dir;

    @Test
    void aDeleteLandingMidEncodeDoesNotFailTheEncode() throws Exception {
        for (String path : List.of(RaidConfig.ENCODE_AT_STORE, RaidConfig.ENCODE_AT_RAID_NODE)) {
            try (TestCluster cluster = new TestCluster(dir.resolve(path), 8)) {
                Cluster http = new Cluster(cluster.directory.address(), null, Duration.ofSeconds(10));
                int volume = cluster.writeVolume(40, 3000);
                TestCluster.Photo victim = cluster.photos.values().iterator().next();
                List<String> replicas = new ArrayList<>();
                var stores = http.stores();
                http.volume(volume).get("replicas").forEach(n -> replicas.add(stores.get(n.asText()).address()));
                RaidConfig config = cluster.raidConfig("rs", 8192);
                config.k = 4;
                config.r = 2;
                config.encodeAt = path;
                config.indexReplicas = 2;
                boolean[] deleted = {false};
                EncodeJob job = new EncodeJob(http, config.validate(), step -> {
                    if (step.startsWith("stripe-") && !deleted[0]) {
                        deleted[0] = true;
                        try {
                            cluster.logDelete(victim); // as a client: the delete log first, then every replica
                            for (String replica : replicas) {
                                assertThat(cluster.send("DELETE", "http://" + replica + "/" + volume + "/"
                                        + Long.toUnsignedString(victim.key()) + "/0?cookie=" + victim.cookie(), null))
                                        .as("delete on %s", replica).isIn(200, 202, 204);
                            }
                        } catch (Exception e) {
                            throw new AssertionError(e);
                        }
                    }
                });

                job.encode(volume);

                assertThat(deleted[0]).as(path).isTrue();
                assertThat(http.stripeMap(volume).status()).as(path).isEqualTo(StripeMap.COMMITTED);
                try (ColdReader reader = new ColdReader(http)) {
                    cluster.assertColdReads(reader, List.of(victim.key()), "after a delete mid-encode, " + path);
                }
            }
        }
    }
}
