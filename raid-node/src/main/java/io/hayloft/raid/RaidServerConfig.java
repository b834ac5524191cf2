package io.hayloft.raid;

import io.hayloft.client.http.AddressList;
import io.hayloft.serverkit.config.CommaList;
import io.hayloft.serverkit.http.Tls;
import java.util.List;

/**
 * How the raid-node daemon ({@link RaidServer}) runs: where it listens, which cluster it works on,
 * where its policy file is. Loaded with {@code ConfigLoader} (a YAML or JSON file, then
 * {@code key=value} overrides); what to encode and how lives in the hot-reloaded {@link RaidPolicy}
 * file, not here. Each field's default is the documented default (docs/raid.md "Daemon").
 * Mutable until {@link #validate()}, then treat as immutable; not thread-safe while being filled.
 */
public final class RaidServerConfig {
    /** Address the HTTP API binds. */
    public String host = "127.0.0.1";
    /** HTTP port; 0 picks a free one. */
    public int port = 7300;
    /** Directory host:port, or the replicas of a directory group as a comma-separated list {@code h1:p1,h2:p2,h3:p3}. */
    @CommaList
    public String directory = "127.0.0.1:7000";
    /** Bearer token for the directory's admin endpoints; null when the cluster has none. */
    public String adminToken;
    /** The policy file (JSON, reloaded when it changes); null: the default policy, never reloaded. */
    public String policyFile;
    /** Bytes moved per HTTP request when copying, repairing and scrubbing. */
    public int transferBytes = 1 << 20;
    /** Stores holding a copy of each volume's needle index. */
    public int indexReplicas = 3;
    /** Deadline of one request to the directory or a store. */
    public long requestTimeoutMillis = 10_000;
    /** Where stripes are encoded: {@code store} (a replica holder, the default) or {@code raid-node} ({@link RaidConfig#encodeAt}). */
    public String encodeAt = RaidConfig.ENCODE_AT_STORE;
    /** Directory for spool files; null: the system temp directory. */
    public String spoolDir;
    /**
     * Name this raid-node holds the cluster's raid lease under; null: {@code raid-node@<host>:<pid>}.
     * A stable name lets a restarted raid-node take its lease back at once (never share one between
     * two running raid-nodes).
     */
    public String nodeId;
    /** How long the raid lease lasts without renewal (renewed every third of it). */
    public long leaseTtlMillis = 30_000;
    /** Longest a {@code POST /admin/run} or {@code /admin/scrub} waits for its pass. */
    public long adminWaitMillis = 3_600_000;
    /** PKCS#12 keystore with the server key and certificate: the HTTP API serves HTTPS (docs/directory-api.md "TLS"). */
    public String tlsKeyStore;
    public String tlsKeyStorePassword;
    /** PKCS#12 of trusted certificates: clients with {@code tlsClientAuth: require}; and the calls to the directory and the stores (https when set). */
    public String tlsTrustStore;
    public String tlsTrustStorePassword;
    /** {@code none}, or {@code require}: mutual TLS, only clients with a trusted certificate. */
    public String tlsClientAuth = "none";

    /** The directory's addresses: {@code directory} split at its commas (each checked as host:port). */
    public List<String> directories() {
        return AddressList.parse("directory", directory);
    }

    /** @throws IllegalArgumentException naming the bad key and value */
    public RaidServerConfig validate() {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be in 0..65535, was " + port);
        }
        directories();
        if (adminWaitMillis < 1) {
            throw new IllegalArgumentException("adminWaitMillis must be >= 1, was " + adminWaitMillis);
        }
        if (leaseTtlMillis < 3 || leaseTtlMillis > 3_600_000) {
            throw new IllegalArgumentException("leaseTtlMillis must be in 3..3600000, was " + leaseTtlMillis);
        }
        if (nodeId != null && nodeId.isBlank()) {
            throw new IllegalArgumentException("nodeId must not be blank");
        }
        base().validate();
        tls().validate();
        return this;
    }

    /** The TLS keys (docs/directory-api.md "TLS"); validated by {@link #validate()}. */
    public Tls.Settings tls() {
        return Tls.Settings.of(tlsKeyStore, tlsKeyStorePassword, tlsTrustStore, tlsTrustStorePassword,
                tlsClientAuth);
    }

    /** Connection settings for jobs; the policy fills in the rest ({@link RaidPolicy#apply}). */
    public RaidConfig base() {
        RaidConfig c = new RaidConfig();
        c.directory = directory;
        c.adminToken = adminToken;
        c.transferBytes = transferBytes;
        c.indexReplicas = indexReplicas;
        c.requestTimeoutMillis = requestTimeoutMillis;
        c.spoolDir = spoolDir;
        c.encodeAt = encodeAt;
        c.tlsKeyStore = tlsKeyStore;
        c.tlsKeyStorePassword = tlsKeyStorePassword;
        c.tlsTrustStore = tlsTrustStore;
        c.tlsTrustStorePassword = tlsTrustStorePassword;
        return c;
    }
}
