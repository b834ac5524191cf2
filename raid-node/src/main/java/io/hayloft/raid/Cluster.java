package io.hayloft.raid;

import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.client.http.AddressList;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.cold.ClusterBlockWrites;
import io.hayloft.format.directory.DeadKeys;
import io.hayloft.format.directory.RaidLease;
import io.hayloft.format.directory.ReclaimPlan;
import io.hayloft.format.directory.ReclaimSwap;
import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.wire.VolumeIndex;
import io.hayloft.format.wire.Wire;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The raid-node's view of the cluster over HTTP: the read calls of {@link io.hayloft.cold.ClusterReads} (cold-read)
 * and the admin and write calls: the directory's volume, encoding, reclaim, drain and lease
 * endpoints (docs/directory-api.md), answered as the records of {@code io.hayloft.format.directory},
 * and the stores' block and volume endpoints (docs/store-api.md).
 * Every failure is an {@link IOException} naming the server and the request.
 *
 * <p>Thread-safe: one shared transport; no other state.
 */
public final class Cluster extends ClusterBlockWrites {

    /** A block listed by a store. */
    public record BlockInfo(String name, long length, long crc32c) {
    }

    /**
     * @param directory  the directory's host:port, or the replicas of a directory group as a comma-separated
     *                   list: every directory call goes through one {@link io.hayloft.client.http.AddressList} of
     *                   them (the leader followed, an unreachable replica passed over)
     * @param adminToken bearer token for the admin endpoints of the directory and the stores, or null
     * @param timeout    deadline of every request (a slow store past it counts as unavailable)
     */
    public Cluster(String directory, String adminToken, Duration timeout) {
        this(directory, adminToken, timeout, HttpTransport.builder().requestTimeout(timeout).build());
    }

    /** @param http the process's transport: {@code https://} and its client certificate when it has a trust store */
    public Cluster(String directory, String adminToken, Duration timeout, HttpTransport http) {
        super(AddressList.parse("directory", directory), adminToken, timeout, http.clusterRpc());
    }

    // ------------------------------------------------------------------ directory


    /** {@code GET /v1/volumes/{id}}: one logical volume; an {@link HttpStatusException} UNKNOWN_VOLUME when there is none. */
    public VolumeInfo volume(int id) throws IOException {
        return JSON.readValue(call("GET", dir("/v1/volumes/" + id), null, true), VolumeInfo.class);
    }

    /** {@code GET /v1/volumes}: every logical volume. */
    public List<VolumeInfo> volumes() throws IOException {
        return List.of(JSON.readValue(call("GET", dir("/v1/volumes"), null, true), VolumeInfo[].class));
    }

    public List<StripeMap> stripeMaps() throws IOException {
        return List.of(JSON.readValue(call("GET", dir("/v1/stripes"), null, true), StripeMap[].class));
    }

    public void beginEncoding(StripeMap plan) throws IOException {
        call("POST", dir("/v1/volumes/" + plan.volume() + "/encoding"), JSON.writeValueAsBytes(plan), true);
    }

    public void commitEncoding(StripeMap map) throws IOException {
        call("POST", dir("/v1/volumes/" + map.volume() + "/encoding/commit"), JSON.writeValueAsBytes(map), true);
    }

    public void abortEncoding(int volume, String job) throws IOException {
        call("DELETE", dir("/v1/volumes/" + volume + "/encoding?job=" + job), null, true);
    }

    public void replicasDropped(int volume) throws IOException {
        call("POST", dir("/v1/volumes/" + volume + "/replicas-dropped"), null, true);
    }

    public StripeMap replaceBlock(int volume, int stripe, int unit, StripeMap.Block expected, StripeMap.Block rebuilt)
            throws IOException {
        String expect = URLEncoder.encode(expected.store() + "/" + expected.name(), StandardCharsets.UTF_8);
        return JSON.readValue(call("PUT", dir("/v1/volumes/" + volume + "/stripes/" + stripe + "/blocks/" + unit
                + "?expect=" + expect), JSON.writeValueAsBytes(rebuilt), true), StripeMap.class);
    }

    /** Every pending reclaim ({@code GET /v1/reclaims}). */
    public List<ReclaimPlan> reclaims() throws IOException {
        return List.of(JSON.readValue(call("GET", dir("/v1/reclaims"), null, true), ReclaimPlan[].class));
    }

    /** Records a reclaim plan beside the committed map of job {@code expect}. */
    public void beginReclaim(StripeMap plan, String expect) throws IOException {
        call("POST", dir("/v1/volumes/" + plan.volume() + "/reclaim?expect=" + expect), JSON.writeValueAsBytes(plan), true);
    }

    /**
     * Swaps the committed map of job {@code expect} for {@code map}; returns the map it replaced
     * (null when the swap had already happened).
     */
    public StripeMap commitReclaim(StripeMap map, String expect) throws IOException {
        return JSON.readValue(call("POST", dir("/v1/volumes/" + map.volume() + "/reclaim/commit?expect=" + expect),
                JSON.writeValueAsBytes(map), true), ReclaimSwap.class).replaced();
    }

    public void abortReclaim(int volume, String job) throws IOException {
        call("DELETE", dir("/v1/volumes/" + volume + "/reclaim?job=" + job), null, true);
    }

    /** Which of {@code keys} are dead in {@code volume} (deleted, unknown or elsewhere), in requests of 10,000 keys. */
    public Set<Long> deadKeys(int volume, Collection<Long> keys) throws IOException {
        Set<Long> dead = new HashSet<>();
        List<Long> all = new ArrayList<>(keys);
        for (int i = 0; i < all.size(); i += 10_000) {
            byte[] body = JSON.writeValueAsBytes(Map.of("keys", all.subList(i, Math.min(all.size(), i + 10_000))));
            dead.addAll(JSON.readValue(call("POST", dir("/v1/volumes/" + volume + "/dead-keys"), body, true), DeadKeys.class).dead());
        }
        return dead;
    }

    // ------------------------------------------------------------------ operator verbs (docs/directory-api.md)

    /** {@code POST /v1/stores/{id}/drain}: the store DRAINING, its writable volumes read-only. */
    public StoreInfo drainStore(String store) throws IOException {
        return JSON.readValue(call("POST", dir("/v1/stores/" + enc(store) + "/drain"), null, true), StoreInfo.class);
    }

    /** {@code POST /v1/stores/{id}/drained}: DRAINING becomes DRAINED; 409 naming what the directory still lists there. */
    public StoreInfo markDrained(String store) throws IOException {
        return JSON.readValue(call("POST", dir("/v1/stores/" + enc(store) + "/drained"), null, true), StoreInfo.class);
    }

    /** {@code POST /v1/volumes/{id}/replicas/move}: replica {@code from} becomes {@code to}; idempotent. */
    public VolumeInfo moveReplica(int volume, String from, String to) throws IOException {
        return JSON.readValue(call("POST", dir("/v1/volumes/" + volume + "/replicas/move"),
                JSON.writeValueAsBytes(Map.of("from", from, "to", to)), true), VolumeInfo.class);
    }

    /** {@code POST /v1/volumes/{id}/index/move}: the needle-index copy on {@code from} is now on {@code to}; idempotent. */
    public StripeMap moveIndex(int volume, String from, String to) throws IOException {
        return JSON.readValue(call("POST", dir("/v1/volumes/" + volume + "/index/move"),
                JSON.writeValueAsBytes(Map.of("from", from, "to", to)), true), StripeMap.class);
    }

    /** {@code POST /v1/stores/{id}/fail}: the store FAILED, its writable volumes read-only. */
    public StoreInfo failStore(String store, String reason) throws IOException {
        return JSON.readValue(call("POST", dir("/v1/stores/" + enc(store) + "/fail"),
                JSON.writeValueAsBytes(Map.of("reason", reason == null ? "" : reason)), true), StoreInfo.class);
    }

    /** {@code POST /v1/stores/{id}/restore}: the store UP again. */
    public StoreInfo restoreStore(String store) throws IOException {
        return JSON.readValue(call("POST", dir("/v1/stores/" + enc(store) + "/restore"), null, true), StoreInfo.class);
    }

    /** {@code POST /v1/volumes/{id}/read-only}: the volume READ_ONLY with {@code reason}. */
    public VolumeInfo markReadOnly(int volume, String reason) throws IOException {
        return JSON.readValue(call("POST", dir("/v1/volumes/" + volume + "/read-only"),
                JSON.writeValueAsBytes(Map.of("reason", reason == null ? "" : reason)), true), VolumeInfo.class);
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    // ------------------------------------------------------------------ stores

    /** True when the store answers {@code GET /health}. */
    public boolean healthy(String store) {
        try {
            call("GET", store(store, "/health"), null, true);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** The ids of the volumes a store holds ({@code GET /admin/volumes}). */
    public Set<Integer> storeVolumes(String store) throws IOException {
        Set<Integer> out = new TreeSet<>();
        for (JsonNode v : JSON.readTree(call("GET", store(store, "/admin/volumes"), null, true)).path("volumes")) {
            out.add(v.get("id").asInt());
        }
        return out;
    }

    /** One volume's status on a store ({@code GET /admin/volumes/<id>}), or null when the store lacks it. */
    public JsonNode storeVolume(String store, int volume) throws IOException {
        byte[] b = call("GET", store(store, "/admin/volumes/" + volume), null, false);
        return b == null ? null : JSON.readTree(b);
    }

    /**
     * {@code POST /admin/volumes/<id>/pull?from=SOURCE} on {@code target}: it copies the sealed replica
     * from {@code source} and answers once the copy is durable and opened; {@code deadline} bounds it.
     */
    public JsonNode pullVolume(String target, int volume, String source, Duration deadline) throws IOException {
        return JSON.readTree(call("POST", store(target, "/admin/volumes/" + volume + "/pull?from=" + enc(source)), null, true,
                deadline));
    }


    public void sealVolume(String store, int volume) throws IOException {
        call("POST", store(store, "/admin/volumes/" + volume + "/seal"), null, true);
    }

    public long volumeSize(String store, int volume) throws IOException {
        return JSON.readTree(call("GET", store(store, "/admin/volumes/" + volume), null, true)).get("sizeBytes").asLong();
    }

    /** A replica's own index of {@code volume} on {@code store}, as that store's index holds it. */
    public VolumeIndex volumeIndex(String store, int volume) throws IOException {
        byte[] b = call("GET", store(store, "/admin/volumes/" + volume + "/index"), null, true);
        return VolumeIndex.decode(b, "listing of volume " + volume + " from store " + store, 0);
    }

    public byte[] readRaw(String store, int volume, long offset, int length) throws IOException {
        return call("GET", store(store, "/volumes/" + volume + "/raw?offset=" + offset + "&length=" + length), null, true);
    }

    /** Seals then deletes a replica; true if it was there. */
    public boolean dropVolume(String store, int volume) throws IOException {
        if (call("POST", store(store, "/admin/volumes/" + volume + "/seal"), null, false) == null) {
            return false;
        }
        return call("DELETE", store(store, "/admin/volumes/" + volume), null, false) != null;
    }

    public void appendBlock(String store, String name, byte[] data) throws IOException {
        appendBlock(store, name, data, data.length);
    }

    /**
     * {@code POST /admin/volumes/<id>/encode-stripe} on {@code store}, a holder of a sealed replica:
     * it encodes the stripe from its own file and sends the blocks itself (docs/store-api.md).
     *
     * @param deadline how long the whole stripe may take
     */
    public Wire.EncodeStripeResult encodeStripe(String store, int volume,
            Wire.EncodeStripeRequest request, Duration deadline) throws IOException {
        byte[] b = call("POST", store(store, "/admin/volumes/" + volume + "/encode-stripe"), JSON.writeValueAsBytes(request), true,
                deadline);
        return JSON.readValue(b, Wire.EncodeStripeResult.class);
    }

    public void putBlock(String store, String name, byte[] data) throws IOException {
        call("PUT", store(store, "/blocks/" + name), data, true);
    }

    /**
     * {@code POST /blocks/<name>?op=pull&from=&source=&length=} on {@code target}: the target copies
     * {@code length} bytes of block {@code source} from store {@code from} into block {@code name}
     * with one streamed read, atomically (replacing a copy left by an earlier attempt), and answers
     * once it is durable; returns what it wrote. {@code deadline} bounds the whole copy.
     *
     * @throws HttpStatusException 400 {@code BAD_ARGUMENT} from a store without the operation, 502
     *                             {@code PULL_SOURCE_FAILED} when the source failed
     */
    public BlockInfo pullBlock(String target, String name, String from, String source, long length, Duration deadline)
            throws IOException {
        JsonNode r = JSON.readTree(call("POST", store(target, "/blocks/" + name + "?op=pull&from=" + enc(from) + "&source="
                + enc(source) + "&length=" + length), null, true, deadline));
        return new BlockInfo(r.get("block").asText(), r.get("length").asLong(), r.get("crc32c").asLong());
    }

    public Map<String, BlockInfo> listBlocks(String store) throws IOException {
        Map<String, BlockInfo> out = new HashMap<>();
        for (JsonNode b : JSON.readTree(call("GET", store(store, "/blocks"), null, true)).get("blocks")) {
            out.put(b.get("name").asText(), new BlockInfo(b.get("name").asText(), b.get("length").asLong(),
                    b.get("crc32c").asLong()));
        }
        return out;
    }

    /**
     * Takes or renews the cluster's raid lease for {@code holder}; returns its epoch.
     *
     * @throws HttpStatusException 409 when another holder has it
     */
    public long acquireLease(String holder, long ttlMillis) throws IOException {
        byte[] body = JSON.writeValueAsBytes(Map.of("holder", holder, "ttlMillis", ttlMillis));
        return JSON.readValue(call("POST", dir("/v1/raid-lease"), body, true), RaidLease.class).epoch();
    }

    /** Releases the raid lease if {@code holder} has it. */
    public void releaseLease(String holder) throws IOException {
        call("DELETE", dir("/v1/raid-lease?holder=" + URLEncoder.encode(holder, StandardCharsets.UTF_8)), null, true);
    }
}
