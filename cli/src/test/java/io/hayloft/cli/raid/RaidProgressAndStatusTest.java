package io.hayloft.cli.raid;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.cli.Hayloft;
import io.hayloft.cli.cluster.ClusterOptions;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PutResult;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.raid.Checkpoints;
import io.hayloft.raid.Cluster;
import io.hayloft.raid.RaidServer;
import io.hayloft.raid.RaidServerConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code raid encode} and {@code raid fix} draw progress bars to 100%; {@code raid status
 * --raid-node} prints the daemon's jobs, repair rate and bytes read per repaired byte; while the
 * daemon holds the raid lease, {@code raid fix} and a second daemon are refused.
 */
class RaidProgressAndStatusTest {

    @TempDir
    Path dir;

    record Run(int code, String out, String err) {
    }

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Hayloft.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void encodeAndFixDrawBarsAndStatusAsksTheRaidNode() throws Exception {
        try (EmbeddedCluster cluster = EmbeddedCluster.start(ClusterOptions.of(dir).withStores(15, 15).withTiming(1000, 200, 2));
             HayloftClient client = cluster.newClient()) {
            Random random = new Random(3);
            int volume = -1;
            for (int i = 0; i < 60; i++) {
                byte[] data = new byte[1 + random.nextInt(4000)];
                random.nextBytes(data);
                PutResult p = client.put(data);
                volume = p.id().volume();
            }
            cluster.directory().directory().markReadOnly(volume, "test");
            String d = cluster.directoryAddress();

            Run encode = run("raid", "encode", Integer.toString(volume), "--directory", d, "--block-size", "16384", "--progress");
            assertThat(encode.code()).as(encode.err()).isZero();
            assertThat(encode.err()).contains("encode v" + volume + " on stores [", "100%");
            int stripes = new Cluster(cluster.directoryAddress(), null, Duration.ofSeconds(5)).stripeMap(volume).stripes().size();
            assertThat(encode.err()).as("stripes done on the bar").contains(stripes + "/" + stripes + " stripes");

            Cluster c = new Cluster(d, null, Duration.ofSeconds(5));
            StripeMap.Block lost = c.stripeMap(volume).stripes().get(0).blocks().get(1);
            assertThat(c.deleteBlock(c.stores().get(lost.store()).address(), lost.name())).isTrue();
            Run fix = run("raid", "fix", "--directory", d, "--progress");
            assertThat(fix.code()).as(fix.err()).isZero();
            assertThat(fix.err()).contains("fix [", "100%");
            assertThat(fix.out()).contains("1 blocks rebuilt");

            RaidServerConfig sc = new RaidServerConfig();
            sc.port = 0;
            sc.directory = d;
            sc.spoolDir = dir.toString();
            try (RaidServer server = RaidServer.start(sc, Checkpoints.NONE)) {
                Run status = run("raid", "status", "--raid-node", server.address());
                assertThat(status.code()).as(status.err()).isZero();
                assertThat(status.out()).contains("policy:           version 1 (defaults)", "running jobs:",
                        "repair rate:", "bytes read per repaired byte", "scrub:");
                // The daemon holds the raid lease: a command that would delete blocks is refused, naming it.
                Run refused = run("raid", "fix", "--directory", d);
                assertThat(refused.code()).isEqualTo(Hayloft.EXIT_FAILED);
                assertThat(refused.err()).contains("held by raid-node@");
                RaidServerConfig other = new RaidServerConfig();
                other.port = 0;
                other.directory = d;
                other.nodeId = "second-raid-node"; // another process, as far as the lease goes
                assertThatThrownBy(() -> RaidServer.start(other, Checkpoints.NONE)).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("another raid-node works on this cluster").hasMessageContaining("held by raid-node@");
            }
            // Released when the daemon stops.
            Run after = run("raid", "recover", "--directory", d);
            assertThat(after.code()).as(after.err()).isZero();
            Run unreachable = run("raid", "status", "--raid-node", "127.0.0.1:1");
            assertThat(unreachable.code()).isEqualTo(Hayloft.EXIT_FAILED);
            assertThat(unreachable.err()).contains("127.0.0.1:1");
        }
    }
}
