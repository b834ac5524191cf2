package io.hayloft.cli.cluster;

import io.hayloft.cache.CacheConfig;
import io.hayloft.raid.RaidServerConfig;
import java.nio.file.Path;

/**
 * The configurations of the servers a cli test starts beside a cluster: a cache and a raid-node on
 * ephemeral ports, reading the cluster's directory. A test sets what else it needs (secrets, worker
 * threads) before it starts them. Stateless.
 */
final class BesideTheCluster {

    private BesideTheCluster() {
    }

    /** A cache on 127.0.0.1, an ephemeral port, reading the directory at {@code directory}. */
    static CacheConfig cache(String directory) {
        CacheConfig c = new CacheConfig();
        c.host = "127.0.0.1";
        c.port = 0;
        c.directory = directory;
        return c;
    }

    /** A raid-node on an ephemeral port for the directory at {@code directory}, spooling in {@code spool}. */
    static RaidServerConfig raid(String directory, Path spool) {
        RaidServerConfig rc = new RaidServerConfig();
        rc.port = 0;
        rc.directory = directory;
        rc.spoolDir = spool.toString();
        return rc;
    }
}
