package io.hayloft.directory;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.nio.file.Path;
import java.util.List;

/**
 * Everything a directory server is configured with; loaded from YAML ({@code hayloft directory
 * --config}) with command-line overrides. Every field has a default ({@link #defaults}).
 *
 * @param dataDir             where the RocksDB database lives
 * @param host                address to bind
 * @param port                HTTP port (0 picks a free one)
 * @param init                create a new, empty cluster database when none exists
 * @param replication         replicas per logical volume
 * @param volumeLimitBytes    size at which a volume is marked read-only
 * @param minWritableVolumes  the directory creates volumes to keep at least this many writable
 * @param keyRangeSize        keys reserved per persisted allocator step
 * @param probeIntervalMillis health-checker period
 * @param probeTimeoutMillis  a probe slower than this fails
 * @param failureThreshold    consecutive failed probes before a store is FAILED
 * @param autoRestore         a FAILED store that passes failureThreshold probes in a row comes back
 * @param clusterSecret       HMAC key for write tokens; null or empty: the cluster is open to writes
 * @param adminToken          bearer token for admin endpoints; null or empty: admin is open
 * @param tokenTtlMillis      write token lifetime
 * @param readPolicy          {@code direct} (stores only) or {@code cache} (cache node first)
 * @param cacheNodes          cache node addresses for the {@code cache} read policy
 * @param tlsCert             PEM certificate chain for HTTPS, or null for plain HTTP
 * @param tlsKey              PEM private key for HTTPS
 */
@JsonIgnoreProperties(ignoreUnknown = false)
public record DirectoryConfig(Path dataDir, String host, int port, boolean init, int replication, long volumeLimitBytes,
                              int minWritableVolumes, int keyRangeSize, long probeIntervalMillis, long probeTimeoutMillis,
                              int failureThreshold, boolean autoRestore, String clusterSecret, String adminToken,
                              long tokenTtlMillis, String readPolicy, List<String> cacheNodes, Path tlsCert, Path tlsKey) {

    public DirectoryConfig {
        if (dataDir == null) {
            throw new IllegalArgumentException("dataDir is required");
        }
        host = host == null ? "127.0.0.1" : host;
        check(port >= 0 && port <= 65535, "port must be in 0..65535, was " + port);
        check(replication >= 1, "replication must be >= 1, was " + replication);
        check(volumeLimitBytes >= 4096, "volumeLimitBytes must be >= 4096, was " + volumeLimitBytes);
        check(minWritableVolumes >= 1, "minWritableVolumes must be >= 1, was " + minWritableVolumes);
        check(keyRangeSize >= 1, "keyRangeSize must be >= 1, was " + keyRangeSize);
        check(probeIntervalMillis >= 10, "probeIntervalMillis must be >= 10, was " + probeIntervalMillis);
        check(probeTimeoutMillis >= 10, "probeTimeoutMillis must be >= 10, was " + probeTimeoutMillis);
        check(failureThreshold >= 1, "failureThreshold must be >= 1, was " + failureThreshold);
        check(tokenTtlMillis >= 1000, "tokenTtlMillis must be >= 1000, was " + tokenTtlMillis);
        readPolicy = readPolicy == null ? "direct" : readPolicy;
        check(readPolicy.equals("direct") || readPolicy.equals("cache"), "readPolicy must be direct or cache, was " + readPolicy);
        cacheNodes = cacheNodes == null ? List.of() : List.copyOf(cacheNodes);
        check(!readPolicy.equals("cache") || !cacheNodes.isEmpty(), "readPolicy cache needs at least one cacheNodes entry");
        check((tlsCert == null) == (tlsKey == null), "tlsCert and tlsKey go together");
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }

    /** Defaults: loopback, port 7000, 3 replicas, 1 GiB volumes, probes every 2 s, 3 failures, open cluster. */
    public static DirectoryConfig defaults(Path dataDir) {
        return new DirectoryConfig(dataDir, "127.0.0.1", 7000, false, 3, 1L << 30, 2, 1000, 2000, 1000, 3, false,
                null, null, 10 * 60_000L, "direct", List.of(), null, null);
    }

    public DirectoryConfig withPort(int p) {
        return new DirectoryConfig(dataDir, host, p, init, replication, volumeLimitBytes, minWritableVolumes, keyRangeSize,
                probeIntervalMillis, probeTimeoutMillis, failureThreshold, autoRestore, clusterSecret, adminToken,
                tokenTtlMillis, readPolicy, cacheNodes, tlsCert, tlsKey);
    }

    public DirectoryConfig withInit(boolean i) {
        return new DirectoryConfig(dataDir, host, port, i, replication, volumeLimitBytes, minWritableVolumes, keyRangeSize,
                probeIntervalMillis, probeTimeoutMillis, failureThreshold, autoRestore, clusterSecret, adminToken,
                tokenTtlMillis, readPolicy, cacheNodes, tlsCert, tlsKey);
    }

    /** A copy with replication, volume limit, probe timing and secrets changed: for tests and the embedded cluster. */
    public DirectoryConfig with(int replicas, long limitBytes, long probeMillis, int threshold, String secret, String admin) {
        return new DirectoryConfig(dataDir, host, port, init, replicas, limitBytes, minWritableVolumes, keyRangeSize,
                probeMillis, Math.max(10, Math.min(probeTimeoutMillis, probeMillis * 5)), threshold, autoRestore, secret, admin,
                tokenTtlMillis, readPolicy, cacheNodes, tlsCert, tlsKey);
    }

    public boolean secured() {
        return clusterSecret != null && !clusterSecret.isEmpty();
    }
}
