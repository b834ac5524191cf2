package io.hayloft.directory;

import io.hayloft.format.ring.CacheRouting;
import io.hayloft.serverkit.http.Tls;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Configuration of a directory server, read from YAML with command-line overrides by
 * {@link io.hayloft.serverkit.config.ConfigLoader} ({@code hayloft directory --config FILE key=value...}).
 * Every key, its default and its meaning:
 * <pre>
 * dataDir              directory-data  where the RocksDB database lives
 * host                 127.0.0.1       address to bind
 * port                 7000            HTTP port (0 picks a free one)
 * init                 false           create a new, empty cluster database when none exists
 * fsync                always          always: every write synced to RocksDB's write-ahead log before it is
 *                                      acknowledged; never: the OS decides (throw-away clusters and tests only: a
 *                                      power cut loses acknowledged changes). A group replica's durability is its
 *                                      Raft log, which is always synced
 * replication          3               replicas per logical volume
 * volumeLimitBytes     1073741824      size at which a volume is marked read-only
 * minWritableVolumes   2               volumes are created to keep at least this many writable
 * keyRangeSize         1000000         keys reserved per persisted allocator step (a lease costs a synced write
 *                                      only when it crosses a step; a crash wastes at most one step)
 * probeIntervalMillis  2000            health-checker period
 * probeTimeoutMillis   1000            a probe slower than this fails
 * failureThreshold     3               consecutive failed probes before a store is FAILED
 * autoRestore          false           a FAILED store that passes failureThreshold probes in a row comes back
 * clusterSecret        (none)          HMAC key for write tokens (16+ chars); none: the cluster is open to writes
 * adminToken           (none)          bearer token for admin endpoints; none: admin is open
 * tokenTtlMillis       600000          write token lifetime
 * readPolicy           direct          direct (stores only) or cache (a cache node first)
 * cacheNodes           []              cache node addresses for the cache read policy (a consistent-hash ring)
 * gutterNodes          []              gutter cache nodes, listed after a photo's cache node in readFrom
 * raidNode             (none)          host:port of the raid-node daemon's HTTP API, for the web console (/ui)
 * tlsKeyStore          (none)          PKCS#12 keystore with the server key and certificate: serve HTTPS
 * tlsKeyStorePassword  (none)          its password
 * tlsTrustStore        (none)          PKCS#12 of trusted certificates (the cluster CA): clients with tlsClientAuth
 *                                      require; the directory's own calls to stores in phase 2
 * tlsTrustStorePassword (none)         its password
 * tlsClientAuth        none            none, or require: mutual TLS, only clients with a trusted certificate
 * raft                 (none)          this directory is one replica of a Raft group (docs/operations.md
 *                                      "A replicated directory"); absent: a single directory
 * raft.id                              this replica's id, one of raft.peers
 * raft.peers                           every replica: {id, raft: host:port of its Raft RPC, http: host:port of its HTTP API}
 * raft.electionTimeoutMillis 500       a follower that hears nothing from the leader for this long (to twice it)
 *                                      starts an election
 * raft.snapshotEvery   10000           entries between snapshots (RocksDB checkpoints); the log before a snapshot is purged
 * raft.commitTimeoutMillis 5000        a change not committed by a majority within this long is answered NO_LEADER (503)
 * raft.bindHost        (peer's host)   address both listeners bind to (e.g. 0.0.0.0), when not the hosts of this replica's entry
 * raft.logSegmentBytes 8388608         size of a Raft log segment file; closed segments below a snapshot are purged
 * raft.packChanges     true            the leader packs changes queued behind its entries in flight into one entry;
 *                                      false while a group is upgraded from a version that cannot read packs
 * raft.entriesInFlight 2               with packing, most log entries of the leader in flight at once (1..64)
 * </pre>
 * Mutable while being bound; {@link #validate()} before use, then treat as immutable.
 */
public final class DirectoryConfig {
    public String dataDir = "directory-data";
    public String host = "127.0.0.1";
    public int port = 7000;
    public boolean init = false;
    public String fsync = "always";
    public int replication = 3;
    public long volumeLimitBytes = 1L << 30;
    public int minWritableVolumes = 2;
    public int keyRangeSize = 1_000_000;
    public long probeIntervalMillis = 2000;
    public long probeTimeoutMillis = 1000;
    public int failureThreshold = 3;
    public boolean autoRestore = false;
    public String clusterSecret;
    public String adminToken;
    public long tokenTtlMillis = 10 * 60_000L;
    public String readPolicy = "direct";
    public List<String> cacheNodes = new ArrayList<>();
    public List<String> gutterNodes = new ArrayList<>();
    public String raidNode;
    private volatile CacheRouting cacheRouting;
    public String tlsKeyStore;
    public String tlsKeyStorePassword;
    public String tlsTrustStore;
    public String tlsTrustStorePassword;
    public String tlsClientAuth = "none";
    public Raft raft;

    /** The {@code raft} section: this replica's id and every replica of the group. */
    public static final class Raft {
        public String id;
        public List<Peer> peers = new ArrayList<>();
        public long electionTimeoutMillis = 500;
        public long snapshotEvery = 10_000;
        public long commitTimeoutMillis = 5000;
        public String bindHost;
        public long logSegmentBytes = 8L << 20;
        /**
         * Whether the leader packs the changes that queue while its entries are in flight into one log
         * entry (format 2, docs/formats.md "Directory log entries"). Every replica must read packs: off
         * while a group is upgraded from a version before packs (docs/operations.md "Rolling upgrades").
         */
        public boolean packChanges = true;
        /** With packing on, most log entries of the leader in flight at once (docs/architecture.md "The write pipeline"). */
        public int entriesInFlight = 2;

        /** This replica's entry of {@link #peers}. */
        public Peer self() {
            return peers.stream().filter(p -> p.id.equals(id)).findFirst().orElseThrow();
        }
    }

    /** One replica of the group: {@code {id, raft: host:port, http: host:port}}. */
    public static final class Peer {
        public String id;
        public String raft;
        public String http;

        public Peer() {
        }

        public Peer(String id, String raft, String http) {
            this.id = id;
            this.raft = raft;
            this.http = http;
        }
    }

    /** Whether this directory is a replica of a Raft group. */
    public boolean replicated() {
        return raft != null;
    }

    /** Checks every value; the error names the key and the bad value. */
    public DirectoryConfig validate() {
        check(dataDir != null && !dataDir.isBlank(), "dataDir is required");
        check(port >= 0 && port <= 65535, "port must be in 0..65535, was " + port);
        check("always".equals(fsync) || "never".equals(fsync), "fsync must be always or never, was " + fsync);
        check(replication >= 1, "replication must be >= 1, was " + replication);
        check(volumeLimitBytes >= 4096, "volumeLimitBytes must be >= 4096, was " + volumeLimitBytes);
        check(minWritableVolumes >= 1, "minWritableVolumes must be >= 1, was " + minWritableVolumes);
        check(keyRangeSize >= 1, "keyRangeSize must be >= 1, was " + keyRangeSize);
        check(probeIntervalMillis >= 10, "probeIntervalMillis must be >= 10, was " + probeIntervalMillis);
        check(probeTimeoutMillis >= 10, "probeTimeoutMillis must be >= 10, was " + probeTimeoutMillis);
        check(failureThreshold >= 1, "failureThreshold must be >= 1, was " + failureThreshold);
        check(tokenTtlMillis >= 1000, "tokenTtlMillis must be >= 1000, was " + tokenTtlMillis);
        check(clusterSecret == null || clusterSecret.isEmpty() || clusterSecret.length() >= 16,
                "clusterSecret must be at least 16 characters");
        check("direct".equals(readPolicy) || "cache".equals(readPolicy), "readPolicy must be direct or cache, was " + readPolicy);
        check(cacheNodes != null, "cacheNodes must be a list");
        check(!"cache".equals(readPolicy) || !cacheNodes.isEmpty(), "readPolicy cache needs at least one cacheNodes entry");
        check(gutterNodes != null, "gutterNodes must be a list");
        if (raidNode != null && !raidNode.isEmpty()) {
            String why = hostPortProblem(raidNode);
            check(why == null, "raidNode must be host:port, was '" + raidNode + "': " + why);
        }
        if (raft != null) {
            check(raft.id != null && !raft.id.isBlank(), "raft.id is required in the raft section");
            check(raft.peers != null && !raft.peers.isEmpty(), "raft.peers must list every replica of the group");
            Set<String> ids = new HashSet<>();
            for (Peer p : raft.peers) {
                check(p != null && p.id != null && p.id.matches("[A-Za-z0-9._-]{1,64}"),
                        "every raft.peers entry needs an id of 1..64 characters [A-Za-z0-9._-], got " + (p == null ? "null" : p.id));
                check(ids.add(p.id), "raft.peers lists " + p.id + " twice");
                check(p.raft != null && hostPortProblem(p.raft) == null, "raft.peers " + p.id + ": raft must be host:port, was '"
                        + p.raft + "'" + (p.raft == null ? "" : ": " + hostPortProblem(p.raft)));
                check(p.http != null && hostPortProblem(p.http) == null, "raft.peers " + p.id + ": http must be host:port, was '"
                        + p.http + "'" + (p.http == null ? "" : ": " + hostPortProblem(p.http)));
            }
            check(ids.contains(raft.id), "raft.id " + raft.id + " is not one of raft.peers " + ids);
            check(raft.electionTimeoutMillis >= 50, "raft.electionTimeoutMillis must be >= 50, was " + raft.electionTimeoutMillis);
            check(raft.snapshotEvery >= 1, "raft.snapshotEvery must be >= 1, was " + raft.snapshotEvery);
            check(raft.logSegmentBytes >= 16 << 10, "raft.logSegmentBytes must be >= 16384, was " + raft.logSegmentBytes);
            check(raft.commitTimeoutMillis >= 100, "raft.commitTimeoutMillis must be >= 100, was " + raft.commitTimeoutMillis);
            check(raft.entriesInFlight >= 1 && raft.entriesInFlight <= 64, "raft.entriesInFlight must be in 1..64, was "
                    + raft.entriesInFlight);
        }
        tls().validate();
        if ("cache".equals(readPolicy)) {
            cacheRouting = new CacheRouting(cacheNodes, gutterNodes);
        }
        return this;
    }

    /** Why {@code s} is not {@code host:port} (a host name, IPv4 or [IPv6] address and a port in 1..65535), or null. */
    static String hostPortProblem(String s) {
        int colon = s.lastIndexOf(':');
        if (colon <= 0 || colon == s.length() - 1) {
            return "no host or no port";
        }
        String host = s.substring(0, colon);
        boolean ipv6 = host.length() > 2 && host.startsWith("[") && host.endsWith("]")
                && host.substring(1, host.length() - 1).chars().allMatch(ch -> Character.digit(ch, 16) >= 0 || ch == ':' || ch == '.');
        boolean name = host.length() <= 253 && host.chars().allMatch(ch -> (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')
                || (ch >= '0' && ch <= '9') || ch == '.' || ch == '-');
        if (!ipv6 && !name) {
            return "bad host '" + host + "'";
        }
        String port = s.substring(colon + 1);
        if (port.length() > 5 || !port.chars().allMatch(ch -> ch >= '0' && ch <= '9') || Integer.parseInt(port) < 1
                || Integer.parseInt(port) > 65535) {
            return "port must be in 1..65535";
        }
        return null;
    }

    /** The raid-node's address, or null when none is configured. */
    public String raidNodeAddress() {
        return raidNode == null || raidNode.isEmpty() ? null : raidNode;
    }

    /** The TLS keys (docs/directory-api.md "TLS"); validated by {@link #validate()}. */
    public Tls.Settings tls() {
        return Tls.Settings.of(tlsKeyStore, tlsKeyStorePassword, tlsTrustStore, tlsTrustStorePassword,
                tlsClientAuth);
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }

    /** The cache ring and gutter pool built by {@link #validate()} (readPolicy cache only). */
    public CacheRouting cacheRouting() {
        if (cacheRouting == null) {
            cacheRouting = new CacheRouting(cacheNodes, gutterNodes);
        }
        return cacheRouting;
    }

    public boolean secured() {
        return clusterSecret != null && !clusterSecret.isEmpty();
    }
}
