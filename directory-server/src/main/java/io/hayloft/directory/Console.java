package io.hayloft.directory;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hayloft.client.RemoteException;
import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.s3.Bucket;
import io.hayloft.format.directory.StoreState;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.VolumeState;
import io.hayloft.format.wire.StripeMap;
import java.net.ConnectException;
import java.net.http.HttpTimeoutException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The body of {@code GET /v1/console}: everything the web console (docs/console.md) shows, in one
 * answer per refresh. Stores, volumes and stripe maps come from the directory's own metadata; the
 * raid-node's {@code /status} and each cache node's {@code /stats} are fetched here, in parallel,
 * through {@link PeerStatusClient}, each bounded by {@link #PEER_TIMEOUT}. A peer that does not
 * answer is reported as {@code "reachable": false} with the reason; it never fails the answer.
 *
 * <p>A replica of a directory group also answers the group ({@code group}, as {@code GET /v1/group});
 * only the leader polls the peers and lists stores and volumes: a follower answers the group and
 * {@code leaderConsole}, the leader's {@code /ui} (null while there is no leader).
 *
 * <p>At most {@link #VOLUMES_PER_STATE} volumes of each state are listed (lowest ids first);
 * {@code volumeCounts} has the totals; at most {@link #BUCKETS_LISTED} S3 buckets, with their object
 * counts and bytes ({@code bucketCount} the total). Stripe maps are sent compactly: for each stripe, the store
 * id of each block in unit order.
 *
 * <p>Thread-safe (reads the directory's thread-safe views; no state of its own).
 */
final class Console {

    /** Longest wait for a raid-node or cache node, connect and answer together. */
    static final Duration PEER_TIMEOUT = Duration.ofMillis(1000);
    /** Volumes listed per state; the rest are only counted. */
    static final int VOLUMES_PER_STATE = 500;
    /** S3 buckets listed; the rest are only counted. */
    static final int BUCKETS_LISTED = 1000;
    /** Damaged stripes relayed from the raid-node's status; the rest are only counted. */
    static final int DAMAGED_LISTED = 200;

    private final Directory directory;
    private final PeerStatusClient peers;
    private final Clock clock;

    Console(Directory directory, PeerStatusClient peers, Clock clock) {
        this.directory = directory;
        this.peers = peers;
        this.clock = clock;
    }

    /**
     * Builds the answer; waits at most about {@link #PEER_TIMEOUT} for the peers. A replica of a
     * directory group adds the group as it sees it ({@link GroupView}); on a follower that is all,
     * with the leader's console to go to: the stores, volumes and the peer polling (raid-node, caches)
     * are the leader's.
     */
    Map<String, Object> snapshot() throws InterruptedException {
        DirectoryConfig config = directory.config();
        ChangeLog log = directory.log();
        boolean replicated = config.replicated();
        boolean leads = !replicated || log.leads();
        Map<String, Object> group = replicated ? GroupView.of(log, peers) : null;
        if (!leads) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("cluster", directory.meta().clusterId());
            m.put("generatedMillis", clock.millis());
            m.put("replicated", true);
            m.put("leads", false);
            m.put("group", group);
            String leaderHttp = leaderHttp(log.group());
            m.put("leaderConsole", leaderHttp == null ? null
                    : (config.tlsKeyStore != null && !config.tlsKeyStore.isEmpty() ? "https://" : "http://") + leaderHttp + "/ui");
            return m;
        }
        String raidAddress = config.raidNodeAddress();
        CompletableFuture<JsonNode> raid = raidAddress == null ? null : peers.raidStatus(raidAddress);
        List<String[]> caches = new ArrayList<>();
        config.cacheNodes.forEach(a -> caches.add(new String[] {a, "cache"}));
        config.gutterNodes.forEach(a -> caches.add(new String[] {a, "gutter"}));
        List<CompletableFuture<JsonNode>> cacheCalls = new ArrayList<>();
        caches.forEach(c -> cacheCalls.add(peers.cacheStats(c[0])));

        long now = clock.millis();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("cluster", directory.meta().clusterId());
        m.put("generatedMillis", now);
        m.put("replicated", replicated);
        m.put("leads", true);
        if (group != null) {
            m.put("group", group);
        }
        List<StoreInfo> stores = directory.stores();
        Map<String, StoreState> storeStates = new HashMap<>();
        List<Map<String, Object>> storeRows = new ArrayList<>();
        for (StoreInfo s : stores) {
            storeStates.put(s.id(), s.state());
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("id", s.id());
            r.put("address", s.address());
            r.put("rack", s.rack());
            r.put("state", s.state().name());
            r.put("capacityBytes", s.capacityBytes());
            r.put("freeBytes", s.freeBytes());
            r.put("lastHeartbeatMillis", s.lastHeartbeatMillis());
            r.put("heartbeatAgeSeconds", Math.max(0, now - s.lastHeartbeatMillis()) / 1000);
            r.put("failures", s.failures());
            r.put("lastError", s.lastError());
            storeRows.add(r);
        }
        storeRows.sort(Comparator.comparing(r -> (String) r.get("id")));
        m.put("stores", storeRows);
        volumes(m, storeStates);
        m.put("raid", raid(raidAddress, raid));
        List<Map<String, Object>> cacheRows = new ArrayList<>();
        for (int i = 0; i < caches.size(); i++) {
            cacheRows.add(cache(caches.get(i)[0], caches.get(i)[1], cacheCalls.get(i)));
        }
        m.put("caches", cacheRows);
        buckets(m);
        return m;
    }

    /** The S3 buckets (at most {@link #BUCKETS_LISTED}, by name) with their objects, bytes and uploads in progress. */
    private void buckets(Map<String, Object> m) {
        List<Bucket> all = directory.namespace().buckets();
        List<Map<String, Object>> rows = new ArrayList<>();
        for (Bucket b : all.subList(0, Math.min(all.size(), BUCKETS_LISTED))) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("name", b.name());
            r.put("region", b.region());
            r.put("created", b.created());
            r.put("objects", b.objects());
            r.put("bytes", b.bytes());
            r.put("uploads", b.uploads());
            rows.add(r);
        }
        m.put("bucketCount", all.size());
        m.put("buckets", rows);
    }

    /** The leader's HTTP address as this replica knows it, or null. */
    private static String leaderHttp(ChangeLog.Group g) {
        if (g.leader() == null) {
            return null;
        }
        for (ChangeLog.Replica r : g.replicas()) {
            if (g.leader().equals(r.id())) {
                return r.http();
            }
        }
        return null;
    }

    private void volumes(Map<String, Object> m, Map<String, StoreState> storeStates) {
        Map<Integer, StripeMap> maps = new HashMap<>();
        for (StripeMap s : directory.cold().stripeMaps()) {
            maps.put(s.volume(), s);
        }
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (VolumeState s : VolumeState.values()) {
            counts.put(s.name(), 0);
        }
        List<VolumeInfo> all = new ArrayList<>(directory.volumes());
        all.sort(Comparator.comparing(VolumeInfo::state).thenComparingInt(VolumeInfo::id));
        List<Map<String, Object>> rows = new ArrayList<>();
        for (VolumeInfo v : all) {
            int seen = counts.merge(v.state().name(), 1, Integer::sum);
            if (seen > VOLUMES_PER_STATE) {
                continue;
            }
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("id", v.id());
            r.put("state", v.state().name());
            r.put("replicas", v.replicas());
            r.put("sizeBytes", v.sizeBytes());
            r.put("limitBytes", v.limitBytes());
            r.put("reason", v.reason());
            StripeMap map = maps.get(v.id());
            if (map != null) {
                Map<String, Object> c = new LinkedHashMap<>();
                c.put("codec", map.codec());
                c.put("k", map.k());
                c.put("r", map.r());
                c.put("status", map.status());
                List<List<String>> stripes = new ArrayList<>();
                for (StripeMap.Stripe st : map.stripes()) {
                    stripes.add(st.blocks().stream().map(StripeMap.Block::store).toList());
                }
                c.put("stripes", stripes);
                long down = map.stripes().stream().flatMap(st -> st.blocks().stream())
                        .filter(b -> storeStates.get(b.store()) == null || !storeStates.get(b.store()).up()).count();
                c.put("blocksOnDownStores", down);
                r.put("coding", c);
            }
            rows.add(r);
        }
        m.put("volumeCounts", counts);
        m.put("volumesPerStateListed", VOLUMES_PER_STATE);
        m.put("volumes", rows);
    }

    private Map<String, Object> raid(String address, CompletableFuture<JsonNode> call) throws InterruptedException {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("address", address);
        r.put("configured", address != null);
        if (address == null) {
            r.put("reachable", false);
            return r;
        }
        JsonNode status = await(call, r);
        if (status != null) {
            if (status instanceof ObjectNode o && o.get("damaged") instanceof ArrayNode damaged) {
                o.put("damagedTotal", damaged.size());
                while (damaged.size() > DAMAGED_LISTED) {
                    damaged.remove(damaged.size() - 1);
                }
            }
            r.put("status", status);
        }
        return r;
    }

    private Map<String, Object> cache(String address, String role, CompletableFuture<JsonNode> call) throws InterruptedException {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("address", address);
        r.put("role", role);
        JsonNode stats = await(call, r);
        if (stats != null) {
            for (String f : List.of("hitRate", "hits", "misses", "leaseWaits", "entries", "bytes")) {
                if (stats.get(f) != null && stats.get(f).isNumber()) {
                    r.put(f, stats.get(f).numberValue());
                }
            }
        }
        return r;
    }

    /** The call's JSON, with {@code reachable: true} put in {@code row}; or null with {@code reachable: false} and the error. */
    private static JsonNode await(CompletableFuture<JsonNode> call, Map<String, Object> row) throws InterruptedException {
        try {
            JsonNode n = call.get(PEER_TIMEOUT.toMillis() + 250, TimeUnit.MILLISECONDS);
            row.put("reachable", true);
            return n;
        } catch (ExecutionException e) {
            row.put("reachable", false);
            Throwable c = e.getCause() == null ? e : e.getCause();
            boolean timedOut = c instanceof TimeoutException || c instanceof HttpTimeoutException
                    || c instanceof RemoteException r && r.kind() == RemoteException.Kind.TIMEOUT;
            row.put("error", timedOut
                    ? "no answer within " + PEER_TIMEOUT.toMillis() + " ms"
                    : c instanceof ConnectException ? "connection refused"
                    : c.getMessage() == null ? c.getClass().getSimpleName() : c.getMessage());
            return null;
        } catch (TimeoutException e) {
            call.cancel(true);
            row.put("reachable", false);
            row.put("error", "no answer within " + PEER_TIMEOUT.toMillis() + " ms");
            return null;
        }
    }
}
