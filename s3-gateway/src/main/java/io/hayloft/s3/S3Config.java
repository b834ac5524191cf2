package io.hayloft.s3;

import io.hayloft.client.http.AddressList;
import io.hayloft.serverkit.config.CommaList;
import io.hayloft.serverkit.http.HttpLimits;
import io.hayloft.serverkit.http.Tls;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Configuration of an S3 gateway, read from YAML with command-line overrides by
 * {@link io.hayloft.serverkit.config.ConfigLoader} ({@code hayloft s3 --config FILE key=value...}).
 * Every key, its default and its meaning:
 * <pre>
 * directory              (required)        the directory's address, or its group's replicas: h1:p1,h2:p2,h3:p3
 * directoryToken         (none)            the directory's admin token, when it has one (namespace changes need it)
 * host                   0.0.0.0           address to bind
 * port                   9000              port to bind (0 picks a free one)
 * accessKey              (none)            the access key of the one user (with secretKey)
 * secretKey              (none)            its secret key
 * credentials            []                several users: a list of {accessKey, secretKey}
 * region                 us-east-1         the region signatures must name, and GetBucketLocation answers
 * domain                 (none)            set: virtual-host style too (bucket.domain); path style always works
 * chunkBytes             8388608           an object is stored as needles of at most this many bytes
 * inlineBytes            4096              an object of one PUT (or copy) at most this long is kept in the directory,
 *                                          no needle (0..65536; 0: never); docs/s3.md "Small objects inline"
 * maxObjectBytes         5497558138880     largest object of one PUT or of a completed multipart upload (5 TiB)
 * sweepIntervalMillis    60000             how often the orphan sweep runs (0: never; `hayloft s3 sweep` runs it once)
 * orphanAfterMillis      3600000           a pending upload's needles older than this, never committed, are deleted
 * abandonedUploadMillis  604800000         multipart uploads not completed this long after they began are aborted
 * workerThreads          128               threads serving requests (a request blocks one while it waits on the cluster)
 * maxHeaderBytes         16384             largest header block; more gets 431
 * maxInitialLineBytes    8192              longest request line; more gets 414
 * maxBodyBytes           16777216          largest body of a request that is not an upload (XML of DeleteObjects...)
 * maxConcurrentRequests  1024              requests in flight; more get 503 SlowDown
 * idleTimeoutMillis      60000             idle or stalled connections are closed
 * ioThreads              0                 Netty event loop threads (0: 2 x cores)
 * tlsKeyStore ...        (none)            as every server: serve HTTPS (tlsKeyStore, tlsKeyStorePassword,
 *                                          tlsTrustStore, tlsTrustStorePassword, tlsClientAuth); the trust store is
 *                                          also used to reach a TLS cluster
 * </pre>
 * Mutable while being bound; {@link #validate()} before use, then treat as immutable.
 */
public final class S3Config {
    @CommaList
    public String directory;
    public String directoryToken;
    public String host = "0.0.0.0";
    public int port = 9000;
    public String accessKey;
    public String secretKey;
    public List<Credential> credentials = new ArrayList<>();
    public String region = "us-east-1";
    public String domain;
    public int chunkBytes = 8 << 20;
    public int inlineBytes = 4096;
    public long maxObjectBytes = 5L << 40;
    public long sweepIntervalMillis = 60_000;
    public long orphanAfterMillis = 3_600_000;
    public long abandonedUploadMillis = 7L * 24 * 3_600_000;
    public int workerThreads = 128;
    public int maxHeaderBytes = 16384;
    public int maxInitialLineBytes = 8192;
    public int maxBodyBytes = 16 << 20;
    public int maxConcurrentRequests = 1024;
    public int idleTimeoutMillis = 60_000;
    public int ioThreads = 0;
    public String tlsKeyStore;
    public String tlsKeyStorePassword;
    public String tlsTrustStore;
    public String tlsTrustStorePassword;
    public String tlsClientAuth = "none";

    /** One user's keys. */
    public static final class Credential {
        public String accessKey;
        public String secretKey;

        public Credential() {
        }

        public Credential(String accessKey, String secretKey) {
            this.accessKey = accessKey;
            this.secretKey = secretKey;
        }
    }

    /** Checks every value; the error names the key and the bad value. */
    public S3Config validate() {
        check(directory != null && !directory.isBlank(), "directory is required: the directory's host:port (or its replicas' list)");
        directories();
        check(port >= 0 && port <= 65535, "port must be in 0..65535, was " + port);
        check(!users().isEmpty(), "no user: set accessKey and secretKey, or credentials (a list of {accessKey, secretKey})");
        check(region != null && region.matches("[a-z0-9-]{1,32}"), "region must be a region name like us-east-1, was " + region);
        check(domain == null || domain.isEmpty() || domain.matches("[A-Za-z0-9.-]+(:[0-9]+)?"), "domain must be a host name, was " + domain);
        check(chunkBytes >= 64 * 1024 && chunkBytes <= 64 << 20, "chunkBytes must be in 65536..67108864, was " + chunkBytes);
        check(inlineBytes >= 0 && inlineBytes <= 65536, "inlineBytes must be in 0..65536, was " + inlineBytes);
        check(maxObjectBytes >= 0, "maxObjectBytes must be >= 0, was " + maxObjectBytes);
        check(sweepIntervalMillis >= 0, "sweepIntervalMillis must be >= 0, was " + sweepIntervalMillis);
        check(orphanAfterMillis >= 1000, "orphanAfterMillis must be >= 1000, was " + orphanAfterMillis);
        check(abandonedUploadMillis >= 1000, "abandonedUploadMillis must be >= 1000, was " + abandonedUploadMillis);
        check(workerThreads >= 1, "workerThreads must be >= 1, was " + workerThreads);
        check(ioThreads >= 0, "ioThreads must be >= 0, was " + ioThreads);
        limits();
        tls().validate();
        return this;
    }

    /** Every user: access key to secret key ({@code accessKey}/{@code secretKey} first, then {@code credentials}). */
    public Map<String, String> users() {
        Map<String, String> users = new LinkedHashMap<>();
        if (accessKey != null || secretKey != null) {
            check(accessKey != null && !accessKey.isBlank() && secretKey != null && !secretKey.isEmpty(),
                    "accessKey and secretKey must be given together");
            users.put(accessKey, secretKey);
        }
        if (credentials != null) {
            for (int i = 0; i < credentials.size(); i++) {
                Credential c = credentials.get(i);
                check(c != null && c.accessKey != null && !c.accessKey.isBlank() && c.secretKey != null && !c.secretKey.isEmpty(),
                        "credentials[" + i + "] needs accessKey and secretKey");
                check(!users.containsKey(c.accessKey), "credentials[" + i + "]: access key " + c.accessKey + " given twice");
                users.put(c.accessKey, c.secretKey);
            }
        }
        return users;
    }

    public List<String> directories() {
        return AddressList.parse("directory", directory);
    }

    public Tls.Settings tls() {
        return Tls.Settings.of(tlsKeyStore, tlsKeyStorePassword, tlsTrustStore, tlsTrustStorePassword, tlsClientAuth);
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
