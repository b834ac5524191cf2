package io.hayloft.directory;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The answers of {@code GET /v1/group} and {@code GET /v1/group/self} (docs/directory-api.md
 * "Replicated directory"): the group as one replica sees it.
 *
 * <pre>
 * {"self": "n1", "leader": "n2" | null, "term": 4,
 *  "replicas": [{"id": "n1", "http": "10.0.0.1:7000", "raft": "10.0.0.1:7100", "role": "FOLLOWER",
 *                "appliedIndex": 812, "commitIndex": 812}, ...]}
 * </pre>
 *
 * <p>{@code role} is {@code LEADER} or {@code FOLLOWER} for a healthy replica ({@code CANDIDATE} during
 * an election), {@code UNREACHABLE} when this replica could not ask it; {@code appliedIndex} is the
 * Raft index of the last entry that replica applied (null when unreachable): indexes of one group are
 * comparable. A single directory answers one replica, {@code single}, its leader. Stateless.
 */
final class GroupView {
    private GroupView() {
    }

    /** This replica's own entry, with the leader and term it knows ({@code /v1/group/self}). */
    static Map<String, Object> self(ChangeLog log) {
        ChangeLog.Group g = log.group();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("self", g.self());
        m.put("leader", g.leader());
        m.put("term", g.term());
        for (ChangeLog.Replica r : g.replicas()) {
            if (r.id().equals(g.self())) {
                m.put("replica", r);
            }
        }
        return m;
    }

    /** The whole group: this replica's view, each other replica's role and indexes asked of it (at most about 1 s). */
    static Map<String, Object> of(ChangeLog log, PeerStatusClient peers) throws InterruptedException {
        ChangeLog.Group g = log.group();
        Map<String, CompletableFuture<JsonNode>> asked = new LinkedHashMap<>();
        for (ChangeLog.Replica r : g.replicas()) {
            if (!r.id().equals(g.self()) && r.http() != null) {
                asked.put(r.id(), peers.replicaStatus(r.http()));
            }
        }
        List<ChangeLog.Replica> out = new ArrayList<>();
        for (ChangeLog.Replica r : g.replicas()) {
            CompletableFuture<JsonNode> f = asked.get(r.id());
            if (f == null) {
                out.add(r);
                continue;
            }
            JsonNode n = null;
            try {
                n = f.get(Console.PEER_TIMEOUT.toMillis() + 200, TimeUnit.MILLISECONDS).path("replica");
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                n = null;
            }
            if (n == null || n.isMissingNode() || !n.hasNonNull("role")) {
                out.add(new ChangeLog.Replica(r.id(), r.http(), r.raft(), "UNREACHABLE", null, null));
            } else {
                out.add(new ChangeLog.Replica(r.id(), r.http(), r.raft(), n.get("role").asText(),
                        n.hasNonNull("appliedIndex") ? n.get("appliedIndex").asLong() : null,
                        n.hasNonNull("commitIndex") ? n.get("commitIndex").asLong() : null));
            }
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("self", g.self());
        m.put("leader", g.leader());
        m.put("term", g.term());
        m.put("replicas", out);
        return m;
    }

    /** A replica to add: an id and two host:port addresses. */
    static void check(DirectoryConfig.Peer p) {
        if (p.id == null || !p.id.matches("[A-Za-z0-9._-]{1,64}")) {
            throw Refusal.invalid("a replica needs an id of 1..64 characters [A-Za-z0-9._-], got " + p.id);
        }
        for (String[] a : new String[][] {{"raft", p.raft}, {"http", p.http}}) {
            String why = a[1] == null ? "missing" : DirectoryConfig.hostPortProblem(a[1]);
            if (why != null) {
                throw Refusal.invalid("replica " + p.id + ": " + a[0] + " must be host:port, was '" + a[1] + "': " + why);
            }
        }
    }
}
