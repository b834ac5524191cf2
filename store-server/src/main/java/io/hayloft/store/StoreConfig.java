package io.hayloft.store;

import io.hayloft.serverkit.http.HttpLimits;
import io.hayloft.serverkit.http.Tls;
import io.hayloft.store.http.StoreHttpHandler;
import io.hayloft.store.volume.NeedleIndex;
import io.hayloft.store.volume.Volume;
import io.hayloft.client.http.AddressList;
import io.hayloft.serverkit.config.CommaList;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Configuration of a store server, read from YAML with command-line overrides by
 * {@link io.hayloft.serverkit.config.ConfigLoader}. Every key, its default and its meaning:
 * <pre>
 * dataDirs               [data]       directories holding volumes (N.dat, N.idx); blocks go to the first
 * host                   0.0.0.0      address to bind
 * port                   8080         port to bind (0 picks a free one)
 * volumeSizeLimit        1073741824   bytes; a volume reaching it becomes read-only (max 16 GiB)
 * fsync                  always       always: fsync before acknowledging (group commit); never: OS decides
 * maxBodyBytes           67108864     largest request body; more gets 413 (not for PUT /blocks/NAME: streamed)
 * maxBlockBytes          4294967296   largest block a streamed PUT /blocks/NAME may write; more gets 413
 * directBlockWrites      true         blocks written front to back (streamed puts, a stripe's local data units) go
 *                                     around the page cache (O_DIRECT) where the file system allows; false: through it
 * maxHeaderBytes         8192         largest header block; more gets 431
 * maxInitialLineBytes    4096         longest request line; more gets 414
 * maxConcurrentRequests  1024         requests in flight; more get 503
 * idleTimeoutMillis      60000        idle or stalled connections are closed (408 if mid-request)
 * diskThreads            32           threads doing disk I/O for requests
 * ioThreads              0            Netty event loop threads (0: 2 x cores)
 * idxFlushMillis         200          how often queued .idx records are written
 * encodeStripes          true         serve POST /admin/volumes/{id}/encode-stripe (false: 404, as an older
 *                                     store; the raid-node then encodes on another holder or itself)
 * directory              (none)       the directory to register and heartbeat with: host:port, or the replicas of a
 *                                     directory group as a comma-separated list h1:p1,h2:p2,h3:p3 (or a YAML list)
 * storeId                (generated)  this store's id; kept in store.id in the first data directory
 * rack                   default      failure domain; replicas of a volume go to distinct racks
 * advertiseAddress       (host:port)  the host:port other servers use to reach this store
 * heartbeatMillis        1000         how often the store reports to the directory
 * awaitDeleteSync        false        serve a volume's reads only after its first delete-log sync (503 VOLUME_SYNCING
 *                                     until then) although no directory is set: for a process that heartbeats for
 *                                     the store (the embedded cluster); implied when directory is set
 * clusterSecret          (none)       the directory's write-token secret; none: writes are not checked
 * adminToken             (none)       bearer token required for volume admin and block operations
 * tlsKeyStore            (none)       PKCS#12 keystore with the server key and certificate: serve HTTPS
 * tlsKeyStorePassword    (none)       its password
 * tlsTrustStore          (none)       PKCS#12 of trusted certificates (the cluster CA): clients with tlsClientAuth
 *                                     require; the store's heartbeats in phase 2
 * tlsTrustStorePassword  (none)       its password
 * tlsClientAuth          none         none, or require: mutual TLS, only clients with a trusted certificate
 * </pre>
 * Mutable while being bound; {@link #validate()} before use, then treat as immutable.
 */
public final class StoreConfig {
    public List<String> dataDirs = new ArrayList<>(List.of("data"));
    public String host = "0.0.0.0";
    public int port = 8080;
    public long volumeSizeLimit = 1L << 30;
    public String fsync = "always";
    public int maxBodyBytes = 64 << 20;
    public long maxBlockBytes = StoreHttpHandler.DEFAULT_MAX_BLOCK_BYTES;
    public boolean directBlockWrites = true;
    public int maxHeaderBytes = 8192;
    public int maxInitialLineBytes = 4096;
    public int maxConcurrentRequests = 1024;
    public int idleTimeoutMillis = 60_000;
    public int diskThreads = 32;
    public int ioThreads = 0;
    public int idxFlushMillis = 200;
    public boolean encodeStripes = true;
    @CommaList
    public String directory;
    public String storeId;
    public String rack = "default";
    public String advertiseAddress;
    public int heartbeatMillis = 1000;
    public boolean awaitDeleteSync;
    public String clusterSecret;
    public String adminToken;
    public String tlsKeyStore;
    public String tlsKeyStorePassword;
    public String tlsTrustStore;
    public String tlsTrustStorePassword;
    public String tlsClientAuth = "none";

    /** Checks every value; the error names the key and the bad value. */
    public StoreConfig validate() {
        if (dataDirs == null || dataDirs.isEmpty()) {
            throw new IllegalArgumentException("dataDirs must name at least one directory");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be in 0..65535, got " + port);
        }
        if (volumeSizeLimit < 4096 || volumeSizeLimit > NeedleIndex.MAX_OFFSET) {
            throw new IllegalArgumentException("volumeSizeLimit must be in 4096.." + NeedleIndex.MAX_OFFSET + ", got "
                    + volumeSizeLimit);
        }
        fsyncPolicy();
        limits();
        if (maxBlockBytes < 0) {
            throw new IllegalArgumentException("maxBlockBytes must be >= 0, got " + maxBlockBytes);
        }
        if (diskThreads <= 0) {
            throw new IllegalArgumentException("diskThreads must be positive, got " + diskThreads);
        }
        if (ioThreads < 0) {
            throw new IllegalArgumentException("ioThreads must be >= 0, got " + ioThreads);
        }
        if (heartbeatMillis < 10) {
            throw new IllegalArgumentException("heartbeatMillis must be >= 10, got " + heartbeatMillis);
        }
        if (clusterSecret != null && !clusterSecret.isEmpty() && clusterSecret.length() < 16) {
            throw new IllegalArgumentException("clusterSecret must be at least 16 characters");
        }
        if (rack == null || rack.isBlank()) {
            throw new IllegalArgumentException("rack must not be empty");
        }
        if (idxFlushMillis <= 0) {
            throw new IllegalArgumentException("idxFlushMillis must be positive, got " + idxFlushMillis);
        }
        directories();
        tls().validate();
        return this;
    }

    /**
     * The directory's addresses ({@code directory} split at its commas), empty when none is set.
     *
     * @throws IllegalArgumentException naming the key and an entry that is not host:port
     */
    public List<String> directories() {
        return directory == null || directory.isBlank() ? List.of() : AddressList.parse("directory", directory);
    }

    /** True when reads of the volumes opened at start wait for their first delete-log sync. */
    public boolean deleteSyncRequired() {
        return awaitDeleteSync || (directory != null && !directory.isBlank());
    }

    public Volume.Fsync fsyncPolicy() {
        try {
            return Volume.Fsync.valueOf(fsync.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalArgumentException("fsync must be 'always' or 'never', got '" + fsync + "'");
        }
    }

    /** The TLS keys (docs/directory-api.md "TLS"); validated by {@link #validate()}. */
    public Tls.Settings tls() {
        return Tls.Settings.of(tlsKeyStore, tlsKeyStorePassword, tlsTrustStore, tlsTrustStorePassword,
                tlsClientAuth);
    }

    public HttpLimits limits() {
        return new HttpLimits(maxInitialLineBytes, maxHeaderBytes, maxBodyBytes, maxConcurrentRequests, idleTimeoutMillis);
    }

    public Volume.Options volumeOptions() {
        return new Volume.Options(volumeSizeLimit, fsyncPolicy());
    }
}
