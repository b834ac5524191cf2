package io.hayloft.cli.raid;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.cli.cluster.ClusterOptions;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PutResult;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.ThreadPoolRunner;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** HayloftClient.get reads photos of erasure-coded volumes from their stripes, also with 4 stores down. */
class ColdReadThroughClientTest {

    @TempDir
    Path dir;

    @Test
    void theClientReadsEncodedVolumesHealthyAndDegraded() throws Exception {
        try (EmbeddedCluster cluster = EmbeddedCluster.start(ClusterOptions.of(dir).withStores(15, 15).withTiming(1000, 200, 2));
             HayloftClient client = cluster.newClient();
             ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            Map<PutResult, byte[]> photos = SmallColdCluster.putPhotos(client, 7, 80);
            RaidNode raid = SmallColdCluster.raidNode(cluster, dir, runner);
            TreeSet<Integer> volumes = new TreeSet<>();
            photos.keySet().forEach(p -> volumes.add(p.id().volume()));
            for (int v : volumes) {
                cluster.directory().directory().markReadOnly(v, "test");
                raid.encode(v);
            }
            for (Map.Entry<PutResult, byte[]> e : photos.entrySet()) {
                assertThat(client.get(e.getKey().id())).isEqualTo(e.getValue());
            }
            for (int i = 0; i < 4; i++) {
                cluster.stopStore(i);
            }
            for (Map.Entry<PutResult, byte[]> e : photos.entrySet()) {
                assertThat(client.get(e.getKey().id())).as("degraded read of " + e.getKey().id()).isEqualTo(e.getValue());
            }
        }
    }
}
