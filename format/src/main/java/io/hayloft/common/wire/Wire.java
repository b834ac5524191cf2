package io.hayloft.common.wire;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/**
 * The JSON bodies of the directory's HTTP API ({@code docs/directory-api.md}), shared by the
 * directory, the stores that heartbeat to it and the client. Unknown fields are ignored on read, so
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

    /** Ask for {@code count} new photo keys on one writable logical volume. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record AssignRequest(int count) {
    }

    /**
     * Where and how to write newly assigned photos: to every replica (store addresses), with the one
     * write token that covers all the assigned keys (sent in the {@code X-Hayloft-Token} header).
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record AssignResponse(int volume, List<String> replicas, List<Assignment> photos, String token) {
        public AssignResponse {
            replicas = List.copyOf(replicas);
            photos = List.copyOf(photos);
        }
    }

    /** One assigned photo key with its cookie (16 hex digits). */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Assignment(long key, String cookie) {
    }

    /**
     * Where to read a photo. {@code readFrom} lists URL prefixes in preferred order (a cache node
     * first when the read policy says so, then healthy replicas); append
     * {@link PhotoId#needlePath()} to get the read URL. {@code replicas} are the store addresses.
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Lookup(long key, int volume, String cookie, List<Integer> alts, boolean deleted, String volumeState,
                         List<String> replicas, List<String> readFrom) {
        public Lookup {
            alts = alts == null ? List.of() : List.copyOf(alts);
            replicas = replicas == null ? List.of() : List.copyOf(replicas);
            readFrom = readFrom == null ? List.of() : List.copyOf(readFrom);
        }
    }

    /** Tell the directory which alternate keys of a photo were written. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Commit(long key, List<Integer> alts) {
        public Commit {
            alts = alts == null ? List.of() : List.copyOf(alts);
        }
    }
}
