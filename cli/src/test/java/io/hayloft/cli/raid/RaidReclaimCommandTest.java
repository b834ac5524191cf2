package io.hayloft.cli.raid;

import io.hayloft.client.Futures;
import io.hayloft.format.wire.Wire;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.cli.Hayloft;
import io.hayloft.cli.cluster.ClusterOptions;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PutResult;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.ThreadPoolRunner;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code hayloft raid reclaim} and the dead bytes in {@code hayloft raid status}, on an embedded
 * cluster of 15 stores, with client deletes; bad usage exits 2.
 */
class RaidReclaimCommandTest {

    @TempDir
    Path dir;

    private static int run(StringWriter out, StringWriter err, String... args) {
        var cl = Hayloft.commandLine();
        cl.setErr(new PrintWriter(err, true));
        cl.setOut(new PrintWriter(out, true));
        return cl.execute(args);
    }

    @Test
    void reclaimByCommandFreesAVolumeOfItsDeletedPhotos() throws Exception {
        try (EmbeddedCluster cluster = EmbeddedCluster.start(ClusterOptions.of(dir).withStores(15, 15).withTiming(1000, 200, 2));
             HayloftClient client = cluster.newClient();
             ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            Map<PutResult, byte[]> photos = SmallColdCluster.putPhotos(client, 11, 60);
            RaidNode raid = SmallColdCluster.raidNode(cluster, dir, runner);
            int volume = photos.keySet().iterator().next().id().volume();
            cluster.directory().directory().markReadOnly(volume, "test");
            raid.encode(volume);
            List<PutResult> deleted = new ArrayList<>();
            int i = 0;
            for (PutResult p : photos.keySet()) {
                if (p.id().volume() == volume && i++ % 2 == 0) {
                    client.delete(p.id());
                    // Cold readers and reclaim's dead keys go by the volume's delete log alone: log it
                    // as the client will (idempotent once the client logs it itself).
                    Futures.await(client.directory().logDeletes(volume, List.of(
                            new Wire.DeleteEntry(0, p.id().key(), String.format("%016x", p.id().cookie()), 1))));
                    deleted.add(p);
                }
            }
            String dirArg = "--directory=" + cluster.directoryAddress();

            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            assertThat(run(out, err, "raid", "status", dirArg)).as(err.toString()).isEqualTo(0);
            assertThat(out.toString()).contains("1 volumes over the reclaim threshold").contains("volume " + volume + ": ");

            out = new StringWriter();
            assertThat(run(out, err, "raid", "reclaim", dirArg, "--threshold", "0.9", String.valueOf(volume))).isEqualTo(0);
            assertThat(out.toString()).contains("left alone");
            String before = raid.cluster().stripeMap(volume).job();

            out = new StringWriter();
            assertThat(run(out, err, "raid", "reclaim", dirArg, String.valueOf(volume))).as(err.toString()).isEqualTo(0);
            assertThat(out.toString()).contains("reclaimed as job").contains("(was " + before + ")");
            assertThat(raid.cluster().stripeMap(volume).job()).isNotEqualTo(before);
            for (Map.Entry<PutResult, byte[]> e : photos.entrySet()) {
                if (!deleted.contains(e.getKey()) && e.getKey().id().volume() == volume) {
                    assertThat(client.get(e.getKey().id())).isEqualTo(e.getValue());
                }
            }

            out = new StringWriter();
            assertThat(run(out, err, "raid", "reclaim", dirArg)).isEqualTo(0);
            assertThat(out.toString()).contains("0 reclaimed");

            StringWriter bad = new StringWriter();
            assertThat(run(new StringWriter(), bad, "raid", "reclaim", dirArg, "--threshold", "1.5")).isEqualTo(Hayloft.EXIT_USAGE);
            assertThat(bad.toString()).contains("1.5");
            bad = new StringWriter();
            assertThat(run(new StringWriter(), bad, "raid", "reclaim", dirArg, "4242")).isEqualTo(Hayloft.EXIT_USAGE);
            assertThat(bad.toString()).contains("volume 4242").contains("UNKNOWN_VOLUME");
            bad = new StringWriter();
            assertThat(run(new StringWriter(), bad, "raid", "reclaim", dirArg, "x")).isEqualTo(Hayloft.EXIT_USAGE);
            assertThat(bad.toString()).contains("'x'");

            // reindex: a coded volume is re-encoded with an exact index; unknown and missing volumes are usage errors
            out = new StringWriter();
            assertThat(run(out, err, "raid", "reindex", dirArg, String.valueOf(volume))).as(err.toString()).isEqualTo(0);
            assertThat(out.toString()).contains("volume " + volume + ": reindexed as job");
            for (Map.Entry<PutResult, byte[]> e : photos.entrySet()) {
                if (!deleted.contains(e.getKey())) {
                    assertThat(client.get(e.getKey().id())).as("photo %s after the reindex", e.getKey().id()).isEqualTo(e.getValue());
                }
            }
            bad = new StringWriter();
            assertThat(run(new StringWriter(), bad, "raid", "reindex", dirArg, "4242")).isEqualTo(Hayloft.EXIT_USAGE);
            assertThat(bad.toString()).contains("volume 4242").contains("UNKNOWN_VOLUME");
            bad = new StringWriter();
            assertThat(run(new StringWriter(), bad, "raid", "reindex", dirArg)).isEqualTo(Hayloft.EXIT_USAGE);
            assertThat(bad.toString()).contains("VOLUME");
        }
    }
}
