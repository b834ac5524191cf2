package io.hayloft.raid;

import io.hayloft.client.http.AddressList;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.serverkit.config.CommaList;
import io.hayloft.erasure.CodecKind;
import io.hayloft.serverkit.http.Tls;
import java.io.Serializable;
import java.time.Duration;
import javax.net.ssl.SSLContext;

/**
 * What the raid-node encodes and how: codec, stripe shape, block size, age policy, repair budget.
 * Each field's default is the documented default (docs/raid.md). Mutable until {@link #validate()},
 * then treat as immutable; not thread-safe while being filled. Serializable, so raid tasks can carry
 * it to an engine's executors ({@link RaidTask}).
 */
public final class RaidConfig implements Serializable {

    private static final long serialVersionUID = 1L;

    /** Directory host:port, or the replicas of a directory group as a comma-separated list {@code h1:p1,h2:p2,h3:p3}. */
    @CommaList
    public String directory = "127.0.0.1:7000";
    /** Bearer token for the directory's admin endpoints; null when the cluster has none. */
    public String adminToken;
    /** Codec wire name: rs, hh-xor, hh-xor+, hh-nonxor. */
    public String codec = CodecKind.HH_XOR_PLUS.wireName();
    public int k = 10;
    public int r = 4;
    /** Bytes per block; even (Hitchhiker splits units in two). */
    public long blockSize = 256L << 20;
    /** Bytes moved per HTTP request when copying volumes and blocks. */
    public int transferBytes = 1 << 20;
    /** Stores holding a copy of each volume's needle index. */
    public int indexReplicas = 3;
    /** Only volumes read-only for at least this long are encoded by the policy. */
    public long minAgeMillis = 24L * 3600 * 1000;
    /** Deadline of one request; a store slower than this counts as unavailable for a read. */
    public long requestTimeoutMillis = 10_000;
    /** Parallel encode or repair jobs. */
    public int workers = 4;
    /**
     * Most stripes repaired at once by {@code BlockFixer.repairAll}: it runs one worker per damaged
     * stripe up to this bound (each holds at most {@code 2 × k × repairWindowBytes}).
     */
    public int repairWorkers = 16;
    /** Bytes of each unit a repair fetches per round (rounds are fetched one ahead of decoding). */
    public int repairWindowBytes = 1 << 20;
    /** Bytes per second each store may spend on repair reads (0: unlimited). */
    public long repairBytesPerSecondPerStore = 0;
    /** A coded volume is reclaimed once more than this fraction of its bytes is dead (deleted or overwritten needles). */
    public double reclaimThreshold = 0.3;
    /** {@link #encodeAt}: a store holding a sealed replica encodes each stripe from its own file. */
    public static final String ENCODE_AT_STORE = "store";
    /** {@link #encodeAt}: the raid-node fetches the volume, computes parity and uploads every block. */
    public static final String ENCODE_AT_RAID_NODE = "raid-node";
    /**
     * Where stripes of a replicated volume are encoded: {@code "store"} (a replica holder reads its
     * own file and sends the blocks; the raid-node path when no holder can) or {@code "raid-node"}.
     */
    public String encodeAt = ENCODE_AT_STORE;
    /** Directory for the raid-node's per-stripe spool files; null: the system temp directory. */
    public String spoolDir;
    /**
     * The calls to the directory and the stores: with a trust store they are {@code https://},
     * presenting the keystore (when set) as client certificate (docs/directory-api.md "TLS").
     * Copied from the raid-node's own TLS keys ({@link RaidServerConfig#base()}).
     */
    public String tlsKeyStore;
    public String tlsKeyStorePassword;
    public String tlsTrustStore;
    public String tlsTrustStorePassword;

    public CodecKind codecKind() {
        return CodecKind.fromWireName(codec);
    }

    /** @throws IllegalArgumentException naming the bad field and value */
    public RaidConfig validate() {
        AddressList.parse("directory", directory);
        codecKind();
        if (k < 1 || r < 1 || k + r > 64) {
            throw new IllegalArgumentException("k and r must be >= 1 with k + r <= 64, were k=" + k + " r=" + r);
        }
        if (blockSize < 2 || blockSize % 8 != 0) {
            throw new IllegalArgumentException("blockSize must be a positive multiple of 8, was " + blockSize);
        }
        if (transferBytes < 4096 || transferBytes > 64 << 20) {
            throw new IllegalArgumentException("transferBytes must be in 4096..67108864, was " + transferBytes);
        }
        if (indexReplicas < 1) {
            throw new IllegalArgumentException("indexReplicas must be >= 1, was " + indexReplicas);
        }
        if (workers < 1) {
            throw new IllegalArgumentException("workers must be >= 1, was " + workers);
        }
        if (!(reclaimThreshold >= 0 && reclaimThreshold < 1)) {
            throw new IllegalArgumentException("reclaimThreshold must be in [0, 1), was " + reclaimThreshold);
        }
        if (repairWorkers < 1) {
            throw new IllegalArgumentException("repairWorkers must be >= 1, was " + repairWorkers);
        }
        if (repairWindowBytes < 2 || repairWindowBytes % 2 != 0) {
            throw new IllegalArgumentException("repairWindowBytes must be an even number >= 2, was " + repairWindowBytes);
        }
        if (!ENCODE_AT_STORE.equals(encodeAt) && !ENCODE_AT_RAID_NODE.equals(encodeAt)) {
            throw new IllegalArgumentException("encodeAt must be 'store' or 'raid-node', was '" + encodeAt + "'");
        }
        if (requestTimeoutMillis < 1) {
            throw new IllegalArgumentException("requestTimeoutMillis must be >= 1, was " + requestTimeoutMillis);
        }
        return this;
    }

    /** Copies {@code other}'s TLS keys (the connection settings a derived configuration keeps). */
    void tlsFrom(RaidConfig other) {
        tlsKeyStore = other.tlsKeyStore;
        tlsKeyStorePassword = other.tlsKeyStorePassword;
        tlsTrustStore = other.tlsTrustStore;
        tlsTrustStorePassword = other.tlsTrustStorePassword;
    }

    /** The HTTP view of the cluster these settings describe: over HTTPS when a trust store is set. */
    public Cluster cluster() {
        return new Cluster(directory, adminToken, Duration.ofMillis(requestTimeoutMillis), transport());
    }

    /** An HTTP transport with these settings' timeouts and TLS (a client certificate when a key store is set). */
    public HttpTransport transport() {
        SSLContext ssl = Tls.Settings.of(tlsKeyStore, tlsKeyStorePassword, tlsTrustStore,
                tlsTrustStorePassword, null).clientContext();
        Duration timeout = Duration.ofMillis(requestTimeoutMillis);
        HttpTransport.Builder b = HttpTransport.builder().requestTimeout(timeout)
                .connectTimeout(Duration.ofMillis(Math.min(requestTimeoutMillis, 5000)));
        if (ssl != null) {
            b.sslContext(ssl);
        }
        return b.build();
    }
}
