package io.hayloft.cli.raid;

import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PutResult;
import io.hayloft.raid.JobRunner;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidNode;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;

/**
 * What the cli's cold-tier tests set up on an {@link EmbeddedCluster}: photos of random sizes put
 * through the client, and a raid-node with 16 KiB blocks so that a few dozen photos make several
 * stripes. Stateless.
 */
final class SmallColdCluster {

    private SmallColdCluster() {
    }

    /** Puts {@code n} photos of 1 to 3,000 random bytes (from {@code seed}); the results in put order. */
    static Map<PutResult, byte[]> putPhotos(HayloftClient client, long seed, int n) throws Exception {
        Random random = new Random(seed);
        Map<PutResult, byte[]> photos = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            byte[] data = new byte[1 + random.nextInt(3000)];
            random.nextBytes(data);
            photos.put(client.put(data), data);
        }
        return photos;
    }

    /** A raid-node for {@code cluster} with 16 KiB blocks and transfers, spooling in {@code dir}. */
    static RaidNode raidNode(EmbeddedCluster cluster, Path dir, JobRunner runner) {
        RaidConfig config = new RaidConfig();
        config.directory = cluster.directoryAddress();
        config.blockSize = 16 << 10;
        config.transferBytes = 16 << 10;
        config.spoolDir = dir.toString();
        return new RaidNode(config, runner);
    }
}
