package io.hayloft.cli.cluster;

import java.nio.file.Path;

/**
 * How to run an {@link EmbeddedCluster}. Build with {@link #of(Path)} and the {@code with...}
 * copies; every argument is checked, and errors name the bad value.
 *
 * @param dataDir             where everything is kept
 * @param stores              number of store servers (at least 1)
 * @param racks               racks the stores are spread over, round robin (1..stores)
 * @param replication         replicas per logical volume (capped at the number of stores)
 * @param volumeLimitBytes    size at which a volume becomes read-only (stores and directory)
 * @param directoryPort       the directory's port on first start (0: a free one; later starts reuse the recorded one)
 * @param heartbeatMillis     how often each store reports to the directory
 * @param probeIntervalMillis the directory's health-checker period
 * @param failureThreshold    failed probes before a store is FAILED
 * @param fsync               stores fsync before acknowledging (off only for throw-away runs)
 * @param clusterSecret       HMAC key for write tokens, or null for an open cluster
 * @param adminToken          the directory's admin token, or null
 * @param directories         directory replicas: 1 (a single directory) or an odd number up to 7 (a Raft group in this process)
 * @param s3Port              the port of an S3 gateway run beside the cluster (0: a free one), or -1 for none
 * @param s3AccessKey         the gateway's one user: access key
 * @param s3SecretKey         and secret key
 *
 * <p>Immutable, hence thread-safe.
 */
public record ClusterOptions(Path dataDir, int stores, int racks, int replication, long volumeLimitBytes, int directoryPort,
                             long heartbeatMillis, long probeIntervalMillis, int failureThreshold, boolean fsync,
                             String clusterSecret, String adminToken, int directories, int s3Port, String s3AccessKey,
                             String s3SecretKey) {
    /** The gateway's user unless {@link #withS3Credentials} says otherwise. */
    public static final String S3_ACCESS_KEY = "hayloft";
    public static final String S3_SECRET_KEY = "hayloft-secret-key";

    public ClusterOptions {
        if (dataDir == null) {
            throw new IllegalArgumentException("a data directory is needed");
        }
        if (stores < 1 || stores > 64) {
            throw new IllegalArgumentException("stores must be in 1..64, was " + stores);
        }
        if (racks < 1 || racks > stores) {
            throw new IllegalArgumentException("racks must be in 1.." + stores + " (the number of stores), was " + racks);
        }
        if (replication < 1) {
            throw new IllegalArgumentException("replication must be >= 1, was " + replication);
        }
        if (volumeLimitBytes < 64 * 1024) {
            throw new IllegalArgumentException("volume limit must be >= 65536 bytes, was " + volumeLimitBytes);
        }
        if (directoryPort < 0 || directoryPort > 65535) {
            throw new IllegalArgumentException("directory port must be in 0..65535, was " + directoryPort);
        }
        if (heartbeatMillis < 10 || probeIntervalMillis < 10) {
            throw new IllegalArgumentException("heartbeat and probe intervals must be >= 10 ms, were " + heartbeatMillis
                    + " and " + probeIntervalMillis);
        }
        if (failureThreshold < 1) {
            throw new IllegalArgumentException("failure threshold must be >= 1, was " + failureThreshold);
        }
        if (directories < 1 || directories > 7 || directories % 2 == 0) {
            throw new IllegalArgumentException("directories must be 1, 3, 5 or 7 (a group needs a majority), was " + directories);
        }
        if (s3Port < -1 || s3Port > 65535) {
            throw new IllegalArgumentException("S3 port must be in 0..65535 (or -1: no gateway), was " + s3Port);
        }
        if (s3AccessKey == null || s3AccessKey.isBlank() || s3SecretKey == null || s3SecretKey.isEmpty()) {
            throw new IllegalArgumentException("the S3 gateway's access key and secret key must not be empty");
        }
    }

    /** Three stores on three racks, 3 replicas, 256 MiB volumes, heartbeats every second, probes every 2 s. */
    public static ClusterOptions of(Path dataDir) {
        return new ClusterOptions(dataDir, 3, 3, 3, 256L << 20, 0, 1000, 2000, 3, true, null, null, 1, -1, S3_ACCESS_KEY,
                S3_SECRET_KEY);
    }

    public ClusterOptions withStores(int n, int r) {
        return new ClusterOptions(dataDir, n, r, replication, volumeLimitBytes, directoryPort, heartbeatMillis,
                probeIntervalMillis, failureThreshold, fsync, clusterSecret, adminToken, directories, s3Port, s3AccessKey, s3SecretKey);
    }

    public ClusterOptions withReplication(int n) {
        return new ClusterOptions(dataDir, stores, racks, n, volumeLimitBytes, directoryPort, heartbeatMillis,
                probeIntervalMillis, failureThreshold, fsync, clusterSecret, adminToken, directories, s3Port, s3AccessKey, s3SecretKey);
    }

    public ClusterOptions withVolumeLimit(long bytes) {
        return new ClusterOptions(dataDir, stores, racks, replication, bytes, directoryPort, heartbeatMillis,
                probeIntervalMillis, failureThreshold, fsync, clusterSecret, adminToken, directories, s3Port, s3AccessKey, s3SecretKey);
    }

    public ClusterOptions withDirectoryPort(int port) {
        return new ClusterOptions(dataDir, stores, racks, replication, volumeLimitBytes, port, heartbeatMillis,
                probeIntervalMillis, failureThreshold, fsync, clusterSecret, adminToken, directories, s3Port, s3AccessKey, s3SecretKey);
    }

    public ClusterOptions withTiming(long heartbeat, long probe, int threshold) {
        return new ClusterOptions(dataDir, stores, racks, replication, volumeLimitBytes, directoryPort, heartbeat, probe,
                threshold, fsync, clusterSecret, adminToken, directories, s3Port, s3AccessKey, s3SecretKey);
    }

    public ClusterOptions withFsync(boolean on) {
        return new ClusterOptions(dataDir, stores, racks, replication, volumeLimitBytes, directoryPort, heartbeatMillis,
                probeIntervalMillis, failureThreshold, on, clusterSecret, adminToken, directories, s3Port, s3AccessKey, s3SecretKey);
    }

    public ClusterOptions withSecrets(String secret, String admin) {
        return new ClusterOptions(dataDir, stores, racks, replication, volumeLimitBytes, directoryPort, heartbeatMillis,
                probeIntervalMillis, failureThreshold, fsync, secret, admin, directories, s3Port, s3AccessKey, s3SecretKey);
    }

    /**
     * With an S3 gateway beside the cluster on {@code port} (0: a free one, kept across
     * {@link EmbeddedCluster#crashS3()} and {@link EmbeddedCluster#startS3()}).
     */
    public ClusterOptions withS3(int port) {
        return new ClusterOptions(dataDir, stores, racks, replication, volumeLimitBytes, directoryPort, heartbeatMillis,
                probeIntervalMillis, failureThreshold, fsync, clusterSecret, adminToken, directories, port, s3AccessKey, s3SecretKey);
    }

    /** The gateway's one user (default {@code hayloft} / {@code hayloft-secret-key}). */
    public ClusterOptions withS3Credentials(String accessKey, String secretKey) {
        return new ClusterOptions(dataDir, stores, racks, replication, volumeLimitBytes, directoryPort, heartbeatMillis,
                probeIntervalMillis, failureThreshold, fsync, clusterSecret, adminToken, directories, s3Port, accessKey, secretKey);
    }

    /** With {@code n} directory replicas (a Raft group when more than one). */
    public ClusterOptions withDirectories(int n) {
        return new ClusterOptions(dataDir, stores, racks, replication, volumeLimitBytes, directoryPort, heartbeatMillis,
                probeIntervalMillis, failureThreshold, fsync, clusterSecret, adminToken, n, s3Port, s3AccessKey, s3SecretKey);
    }
}
