package io.hayloft.format.directory;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * A store server as the directory knows it: the answer of {@code GET /v1/stores} (a list) and of
 * {@code POST /v1/stores/{id}/restore}, {@code .../fail}, {@code .../drain} and {@code .../drained}
 * (docs/directory-api.md). The directory also stores it, as the same JSON, in the {@code stores}
 * column family (docs/formats.md). Unknown fields are ignored on read so newer directories can add
 * fields. Immutable; thread-safe.
 *
 * @param id                  stable store id, chosen by the store (its data directory remembers it)
 * @param address             {@code host:port} of its HTTP API
 * @param rack                failure domain; replicas of one volume go to distinct racks when possible
 * @param capacityBytes       bytes the store may use for volumes
 * @param freeBytes           bytes still free, from the last heartbeat
 * @param lastHeartbeatMillis wall-clock time of the last heartbeat
 * @param state               health as the health checker sees it
 * @param failures            consecutive failed probes
 * @param lastError           why the last probe failed, or null
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record StoreInfo(String id, String address, String rack, long capacityBytes, long freeBytes,
                        long lastHeartbeatMillis, StoreState state, int failures, String lastError) {

    public StoreInfo withHeartbeat(String address, long capacity, long free, long now) {
        return new StoreInfo(id, address, rack, capacity, free, now, state, failures, lastError);
    }

    public StoreInfo withState(StoreState s, int failures, String error) {
        return new StoreInfo(id, address, rack, capacityBytes, freeBytes, lastHeartbeatMillis, s, failures, error);
    }
}
