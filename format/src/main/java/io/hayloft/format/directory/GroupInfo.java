package io.hayloft.format.directory;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/**
 * The answer of {@code GET /v1/group} (and of the group verbs, {@code hayloft directory group},
 * docs/directory-api.md "Replicated directory"): a directory group as one replica sees it. A single
 * directory answers one replica, {@code single}, its own leader. Unknown fields are ignored on read.
 * Immutable; thread-safe.
 *
 * @param self     the id of the replica that answered
 * @param leader   the leader's id, or null when the answering replica knows none
 * @param term     the Raft term the answering replica is in (0 for a single directory)
 * @param replicas every configured replica
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record GroupInfo(String self, String leader, long term, List<Replica> replicas) {

    public GroupInfo {
        replicas = replicas == null ? List.of() : List.copyOf(replicas);
    }

    /**
     * One replica.
     *
     * @param id           its id ({@code raft.id})
     * @param http         host:port of its HTTP API
     * @param raft         host:port of its Raft RPC (null for a single directory)
     * @param role         {@code LEADER}, {@code FOLLOWER}, {@code CANDIDATE}, or {@code UNREACHABLE}
     * @param appliedIndex Raft index of the last entry it applied (comparable across one group's replicas), or null when unknown
     * @param commitIndex  Raft index it knows committed, or null when unknown
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Replica(String id, String http, String raft, String role, Long appliedIndex, Long commitIndex) {
    }

    /** The leader's entry, or null when there is no leader. */
    public Replica leaderReplica() {
        if (leader == null) {
            return null;
        }
        return replicas.stream().filter(r -> leader.equals(r.id())).findFirst().orElse(null);
    }
}
