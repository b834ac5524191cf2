package io.hayloft.directory.meta;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * A store server as the directory knows it. Stored as JSON in the {@code stores} column family;
 * unknown fields are ignored on read so newer directories can add fields.
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

    public enum StoreState {
        /** Healthy: may receive new volumes and writes. */
        UP,
        /** Failed the health checker too often: its volumes were marked read-only; waits for an operator or policy. */
        FAILED,
        /**
         * An operator is moving everything off it (hayloft stores drain): no new volumes, its volumes
         * read-only, still read from until the drain job has moved its last replica and block.
         */
        DRAINING,
        /** Taken out of service by an operator: holds nothing the directory lists, no new volumes. */
        DRAINED
    }

    public StoreInfo withHeartbeat(String address, long capacity, long free, long now) {
        return new StoreInfo(id, address, rack, capacity, free, now, state, failures, lastError);
    }

    public StoreInfo withState(StoreState s, int failures, String error) {
        return new StoreInfo(id, address, rack, capacityBytes, freeBytes, lastHeartbeatMillis, s, failures, error);
    }
}
