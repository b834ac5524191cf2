package io.hayloft.cache;

import io.hayloft.client.http.AddressList;
import io.hayloft.serverkit.config.CommaList;
import io.hayloft.serverkit.http.HttpLimits;
import io.hayloft.serverkit.http.Tls;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Configuration of a cache server, read from YAML with command-line overrides by
 * {@link io.hayloft.serverkit.config.ConfigLoader} ({@code hayloft cache --config FILE key=value...}).
 * Every key, its default and its meaning:
 * <pre>
 * host                   0.0.0.0           address to bind
 * port                   8090              port to bind (0 picks a free one)
 * role                   primary           primary (a ring member) or gutter (takes a failed node's keys briefly)
 * maxBytes               268435456         bytes of needle data kept in memory (W-TinyLFU eviction by weight)
 * maxObjectBytes         8388608           larger needles (or larger than maxBytes) are passed through, never cached
 * ttlMillis              0                 entries expire this long after being stored; 0: never (primary)
 * gutterTtlMillis        10000             entry lifetime on a gutter node (role gutter), 1..600000
 * admitOnlyUsers         true              cache a miss only when the request comes straight from a user, not a CDN
 * admitOnlyWritable      true              cache a miss only when the store says the volume is writable
 * admitCold              false             cache misses of cold URLs (needles of erasure-coded volumes)
 * directory              (none)            directory host:port, or its group's replicas as a comma-separated list
 *                                          h1:p1,h2:p2,h3:p3 (or a YAML list); set: cold URLs (/cold/...) are read
 *                                          through the stripes
 * directoryToken         (none)            bearer token for the directory's admin reads (stripe maps), if it has one
 * coldTimeoutMillis      10000             a cold read (degraded ones included) slower than this fails with STORE_TIMEOUT
 * coldThreads            16                threads running cold reads (they block on the directory and stores)
 * coldIndexCacheBytes    67108864          bytes of needle indexes and stripe maps of coded volumes kept in memory
 * cdnHeader              X-Hayloft-Cdn     a request carrying this header comes from a CDN
 * cdnNetworks            []                CIDRs (10.1.0.0/16, ::1/128) whose clients are CDNs
 * allowedStores          []                host:port of stores the cache may fetch from; empty: any
 * storeTimeoutMillis     2000              a store fetch slower than this fails with STORE_TIMEOUT
 * leaseTimeoutMillis     3000              waiters on a lease fall back to the store after this long
 * tombstoneMillis        10000             after an invalidation, fills of that needle are not stored for this long
 * clusterSecret          (none)            HMAC key of write tokens; set: pushes and invalidations need a token
 * workerThreads          256               threads serving requests (a miss blocks one while it waits)
 * maxBodyBytes           16777216          largest pushed body; more gets 413
 * maxHeaderBytes         8192              largest header block; more gets 431
 * maxInitialLineBytes    4096              longest request line; more gets 414
 * maxConcurrentRequests  4096              requests in flight; more get 503
 * idleTimeoutMillis      60000             idle or stalled connections are closed
 * ioThreads              0                 Netty event loop threads (0: 2 x cores)
 * tlsKeyStore            (none)            PKCS#12 keystore with the server key and certificate: serve HTTPS
 * tlsKeyStorePassword    (none)            its password
 * tlsTrustStore          (none)            PKCS#12 of trusted certificates (the cluster CA): clients with
 *                                          tlsClientAuth require; the node's reads from stores in phase 2
 * tlsTrustStorePassword  (none)            its password
 * tlsClientAuth          none              none, or require: mutual TLS, only clients with a trusted certificate
 * </pre>
 * Mutable while being bound; {@link #validate()} before use, then treat as immutable.
 */
public final class CacheConfig {
    public String host = "0.0.0.0";
    public int port = 8090;
    public String role = "primary";
    public long maxBytes = 256L << 20;
    public int maxObjectBytes = 8 << 20;
    public long ttlMillis = 0;
    public long gutterTtlMillis = 10_000;
    public boolean admitOnlyUsers = true;
    public boolean admitOnlyWritable = true;
    public boolean admitCold = false;
    @CommaList
    public String directory;
    public String directoryToken;
    public long coldTimeoutMillis = 10_000;
    public int coldThreads = 16;
    public long coldIndexCacheBytes = 64L << 20;
    public String cdnHeader = "X-Hayloft-Cdn";
    public List<String> cdnNetworks = new ArrayList<>();
    public List<String> allowedStores = new ArrayList<>();
    public long storeTimeoutMillis = 2000;
    public long leaseTimeoutMillis = 3000;
    public long tombstoneMillis = 10_000;
    public String clusterSecret;
    public int workerThreads = 256;
    public int maxBodyBytes = 16 << 20;
    public int maxHeaderBytes = 8192;
    public int maxInitialLineBytes = 4096;
    public int maxConcurrentRequests = 4096;
    public int idleTimeoutMillis = 60_000;
    public int ioThreads = 0;
    public String tlsKeyStore;
    public String tlsKeyStorePassword;
    public String tlsTrustStore;
    public String tlsTrustStorePassword;
    public String tlsClientAuth = "none";

    /** Checks every value; the error names the key and the bad value. */
    public CacheConfig validate() {
        check(port >= 0 && port <= 65535, "port must be in 0..65535, was " + port);
        gutter();
        check(maxBytes >= 1024, "maxBytes must be >= 1024, was " + maxBytes);
        check(maxObjectBytes >= 1, "maxObjectBytes must be >= 1, was " + maxObjectBytes);
        check(ttlMillis >= 0, "ttlMillis must be >= 0 (0: no expiry), was " + ttlMillis);
        check(gutterTtlMillis >= 1 && gutterTtlMillis <= 600_000, "gutterTtlMillis must be in 1..600000, was " + gutterTtlMillis);
        check(cdnHeader != null && !cdnHeader.isBlank(), "cdnHeader must be a header name");
        check(cdnNetworks != null, "cdnNetworks must be a list");
        for (String n : cdnNetworks) {
            Admission.Cidr.parse(n);
        }
        check(allowedStores != null, "allowedStores must be a list");
        for (String s : allowedStores) {
            CacheUrl.checkStore(s);
        }
        if (directory != null && !directory.isEmpty()) {
            for (String d : directories()) {
                try {
                    CacheUrl.checkStore(d);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("directory: entry '" + d + "' is not host:port: " + e.getMessage());
                }
            }
        }
        check(coldTimeoutMillis >= 1, "coldTimeoutMillis must be >= 1, was " + coldTimeoutMillis);
        check(coldThreads >= 1, "coldThreads must be >= 1, was " + coldThreads);
        check(coldIndexCacheBytes >= 1 << 20, "coldIndexCacheBytes must be >= 1048576, was " + coldIndexCacheBytes);
        check(storeTimeoutMillis >= 1, "storeTimeoutMillis must be >= 1, was " + storeTimeoutMillis);
        check(leaseTimeoutMillis >= 1, "leaseTimeoutMillis must be >= 1, was " + leaseTimeoutMillis);
        check(tombstoneMillis >= 0, "tombstoneMillis must be >= 0, was " + tombstoneMillis);
        check(clusterSecret == null || clusterSecret.isEmpty() || clusterSecret.length() >= 16,
                "clusterSecret must be at least 16 characters");
        check(workerThreads >= 1, "workerThreads must be >= 1, was " + workerThreads);
        check(ioThreads >= 0, "ioThreads must be >= 0, was " + ioThreads);
        limits();
        tls().validate();
        return this;
    }

    /** True for a gutter node. */
    public boolean gutter() {
        String r = role == null ? "" : role.toLowerCase(Locale.ROOT);
        check("primary".equals(r) || "gutter".equals(r), "role must be primary or gutter, was " + role);
        return "gutter".equals(r);
    }

    /** Entry lifetime in milliseconds, 0 for none: {@code gutterTtlMillis} on a gutter node. */
    public long effectiveTtlMillis() {
        if (gutter()) {
            return ttlMillis > 0 ? Math.min(ttlMillis, gutterTtlMillis) : gutterTtlMillis;
        }
        return ttlMillis;
    }

    /** The largest needle kept: {@code maxObjectBytes}, at most {@code maxBytes}. */
    public int objectLimit() {
        return (int) Math.min(maxObjectBytes, maxBytes);
    }

    /**
     * The directory's addresses ({@code directory} split at its commas), empty when none is set.
     *
     * @throws IllegalArgumentException naming the key and an entry that is not host:port
     */
    public List<String> directories() {
        return directory == null || directory.isBlank() ? List.of() : AddressList.parse("directory", directory);
    }

    /** True when cold URLs can be served (a directory is configured). */
    public boolean coldEnabled() {
        return directory != null && !directory.isEmpty();
    }

    public boolean secured() {
        return clusterSecret != null && !clusterSecret.isEmpty();
    }

    /** The TLS keys (docs/directory-api.md "TLS"); validated by {@link #validate()}. */
    public Tls.Settings tls() {
        return Tls.Settings.of(tlsKeyStore, tlsKeyStorePassword, tlsTrustStore, tlsTrustStorePassword,
                tlsClientAuth);
    }

    public HttpLimits limits() {
        return new HttpLimits(maxInitialLineBytes, maxHeaderBytes, maxBodyBytes, maxConcurrentRequests, idleTimeoutMillis);
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}
