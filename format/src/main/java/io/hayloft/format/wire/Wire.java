package io.hayloft.format.wire;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import io.hayloft.format.directory.StoreState;
import io.hayloft.format.directory.VolumeState;
import java.util.List;
import java.util.Map;

/**
 * The JSON bodies of the directory's hot path and heartbeats ({@code docs/directory-api.md}), shared by the
 * directory, the stores that heartbeat to it and the client; the directory's other answers are the
 * records of {@code io.hayloft.format.directory}. Unknown fields are ignored on read, so
 * either side may add fields; a field's meaning never changes within API version {@code v1}.
 */
public final class Wire {

    private Wire() {
    }

    /** A store's registration and heartbeat: who it is and what it holds. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Heartbeat(String storeId, String address, String rack, long capacityBytes, long freeBytes,
                            List<VolumeReport> volumes) {
        public Heartbeat {
            volumes = volumes == null ? List.of() : List.copyOf(volumes);
        }
    }

    /** One physical volume as a store reports it. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record VolumeReport(int id, long sizeBytes, boolean readOnly) {
    }

    // ------------------------------------------------------------------ the hot path (docs/directory-api.md "Hot path")

    /**
     * Ask for an allocator lease: {@code keys} (1..{@value #MAX_LEASE_KEYS}) new consecutive photo keys
     * on one writable logical volume that is none of {@code exclude} (volumes the client just found
     * read-only or failing).
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record LeaseRequest(int keys, List<Integer> exclude) {
        public LeaseRequest {
            exclude = exclude == null ? List.of() : List.copyOf(exclude);
        }
    }

    /** The most keys one lease may hold. */
    public static final int MAX_LEASE_KEYS = 100_000;

    /**
     * An allocator lease: the keys {@code [first, first + count)} on logical volume {@code volume},
     * which the client may write (each photo with a cookie of its own choosing) to every replica with
     * header {@code X-Hayloft-Token: <token>} until {@code expiresMillis} (directory clock). The
     * directory keeps no record of the keys beyond its key high-water mark: the stores are the
     * authority for which photos exist.
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Lease(int volume, List<String> replicas, long first, int count, String token, long expiresMillis) {
        public Lease {
            replicas = replicas == null ? List.of() : List.copyOf(replicas);
        }
    }

    /**
     * Where every logical volume lives: what a client caches to read and delete without a directory
     * call per photo. {@code version} is opaque and changes whenever anything in the map changes (it
     * is the answer's {@code ETag}; a request with {@code If-None-Match} of the current version is
     * answered {@code 304}). Read URLs are built by the client: with {@code readPolicy} {@code cache}
     * the key's cache node and gutter node on the consistent-hash ring of {@code cacheNodes} /
     * {@code gutterNodes} ({@link io.hayloft.format.ring.CacheRouting}) come first, then
     * {@code replicas}, then {@code down}.
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record VolumeMap(String version, String scheme, String readPolicy, List<String> cacheNodes,
                            List<String> gutterNodes, List<VolumeLocation> volumes) {
        public VolumeMap {
            cacheNodes = cacheNodes == null ? List.of() : List.copyOf(cacheNodes);
            gutterNodes = gutterNodes == null ? List.of() : List.copyOf(gutterNodes);
            volumes = volumes == null ? List.of() : List.copyOf(volumes);
        }
    }

    /**
     * One logical volume in the {@link VolumeMap}: its state ({@link VolumeState}), the addresses of
     * its replicas on stores that are {@code UP} and of those on stores that are not, and the head
     * (highest sequence number, 0 for none) of its delete log.
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record VolumeLocation(int id, VolumeState state, List<String> replicas, List<String> down, long deleteHead) {
        public VolumeLocation {
            replicas = replicas == null ? List.of() : List.copyOf(replicas);
            down = down == null ? List.of() : List.copyOf(down);
        }
    }

    /**
     * One entry of a volume's delete log: photo {@code key} with cookie {@code cookie} (16 hex digits)
     * is deleted, every alternate key of it. {@code seq} is given by the directory (send 0); it grows
     * by one per entry within a volume. A store or a cold reader applies an entry only to needles
     * whose cookie is the entry's. {@code needles} is how many needles (alternate keys) the photo has,
     * as the deleting client found it (the reclaim hint of a coded volume; 0 when unknown).
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record DeleteEntry(long seq, long key, String cookie, int needles) {
    }

    /** {@code POST /v1/volumes/{id}/deletes}: photos to add to the volume's delete log (1..1000). */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record DeleteRequest(List<DeleteEntry> deletes) {
        public DeleteRequest {
            deletes = deletes == null ? List.of() : List.copyOf(deletes);
        }
    }

    /**
     * A volume's delete log, or part of it: {@code entries} in order of {@code seq}, {@code head} the
     * highest sequence number the log holds. Answering a {@code POST}, {@code entries} are the logged
     * entries (a key logged before keeps its first entry) and {@code token} a write token that covers
     * their keys on the volume, for deleting their needles on the stores ("" in an open cluster);
     * answering a {@code GET}, {@code token} is null and {@code more} says whether entries after the
     * last one returned remain.
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record DeleteLog(int volume, long head, List<DeleteEntry> entries, String token, boolean more) {
        public DeleteLog {
            entries = entries == null ? List.of() : List.copyOf(entries);
        }
    }

    /**
     * The directory's answer to a heartbeat ({@code POST /v1/heartbeat}): the store's state and the
     * delete-log head of each volume it holds a replica of.
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record HeartbeatAnswer(String storeId, StoreState state, Map<Integer, Long> deleteHeads) {
        public HeartbeatAnswer {
            deleteHeads = deleteHeads == null ? Map.of() : Map.copyOf(deleteHeads);
        }
    }
    /**
     * Where one unit of a stripe goes, in {@link EncodeStripeRequest#targets}: the store's id, its
     * address (host:port) and the block's name.
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record EncodeTarget(String store, String address, String name) {
    }

    /**
     * {@code POST /admin/volumes/{id}/encode-stripe} on a store holding a sealed replica (docs/store-api.md):
     * encode stripe {@code stripe} of the volume with codec {@code codec} ({@code k} data, {@code r}
     * parity units of {@code blockSize} bytes) into the {@code k + r} blocks of {@code targets} (unit
     * order). {@code volumeSize} is the size the raid-node planned with (the store refuses a replica of
     * another size); {@code transferBytes} the chunk of each block upload; {@code holder} the address
     * the caller reached this store at: targets with that address are written into its own block store
     * (null: the request's Host header). {@code job} names the encode job in logs.
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record EncodeStripeRequest(String job, String codec, int k, int r, long blockSize, long volumeSize, int stripe,
                                      int transferBytes, List<EncodeTarget> targets, String holder) {
    }

    /**
     * The answer to {@link EncodeStripeRequest}: each unit's CRC32C (every block is {@code blockSize}
     * long), the candidate needle headers of the stripe's range (footer CRC32C filled in; the raid-node
     * keeps those on the needle chain), the bytes read from the volume file and the bytes sent to other stores.
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record EncodeStripeResult(int stripe, long[] crc32c, List<VolumeIndex.Entry> candidates, long bytesRead,
                                     long bytesSent) {
    }
}
