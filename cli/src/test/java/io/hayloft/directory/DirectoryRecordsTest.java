package io.hayloft.directory;

import java.lang.reflect.Type;
import java.nio.file.Path;
import java.util.Map;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hayloft.client.DirectoryClient;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.format.directory.BackupManifest;
import io.hayloft.format.directory.DeadKeys;
import io.hayloft.format.directory.Health;
import io.hayloft.format.directory.RaidHold;
import io.hayloft.format.directory.RaidHoldRelease;
import io.hayloft.format.directory.RaidLease;
import io.hayloft.format.directory.ReclaimPlan;
import io.hayloft.format.directory.ReclaimSwap;
import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.directory.StoreState;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.VolumeState;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.wire.Wire;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The records of {@code io.hayloft.format.directory} (and {@link Wire}'s) against what a real
 * directory server (with real stores) answers over HTTP, one endpoint after another: each answer read
 * as its record writes back the very JSON the directory sent (the same bytes where the directory
 * serialises the record itself; the same fields and values where it builds a map), reads to an equal
 * record with unknown fields added at every level, and {@link DirectoryClient} returns the same
 * record. The states on the way are checked with the states' predicates.
 */
class DirectoryRecordsTest extends DirectoryOverHttp {

    /** One request; asserts the status and returns the body as the directory sent it. */
    private String raw(String method, String path, String body, String bearer) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://" + directory.address() + path))
                .timeout(Duration.ofSeconds(10))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (bearer != null) {
            b.header("Authorization", "Bearer " + bearer);
        }
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as("%s %s -> %s", method, path, r.body()).isEqualTo(200);
        return r.body();
    }

    /**
     * {@code body} read as {@code type}: written back, the same bytes when {@code exact} (the directory
     * serialised this record), else the same JSON tree; read again with unknown fields, equal.
     */
    private static <T> T check(String body, TypeReference<T> type, boolean exact) throws Exception {
        T t = JSON.readValue(body, type);
        String back = JSON.writeValueAsString(t);
        if (exact) {
            assertThat(back).as("%s written back", type.getType()).isEqualTo(body);
        } else {
            assertThat(JSON.readTree(back)).as("%s written back", type.getType()).isEqualTo(JSON.readTree(body));
        }
        JsonNode future = addUnknown(JSON.readTree(body));
        assertThat(JSON.<T>readValue(JSON.treeAsTokens(future), JSON.getTypeFactory().constructType(type)))
                .as("%s with unknown fields", type.getType()).isEqualTo(t);
        return t;
    }

    private static <T> T check(String body, Class<T> type, boolean exact) throws Exception {
        return check(body, new TypeReference<T>() {
            @Override
            public Type getType() {
                return type;
            }
        }, exact);
    }

    private static JsonNode addUnknown(JsonNode n) {
        if (n.isObject()) {
            n.fields().forEachRemaining(e -> {
                if (!e.getKey().equals("deleteHeads")) { // a map, not a record
                    addUnknown(e.getValue());
                }
            });
            ((ObjectNode) n).putObject("fieldOfALaterVersion").putArray("x").add(1);
        } else if (n.isArray()) {
            n.forEach(DirectoryRecordsTest::addUnknown);
        }
        return n;
    }

    private static StripeMap map(int volume, String job, String status) {
        List<StripeMap.Block> blocks = List.of(new StripeMap.Block("s0", "v" + volume + "-" + job + "-s0-u0", 8, 1),
                new StripeMap.Block("s1", "v" + volume + "-" + job + "-s0-u1", 8, 0xffffffffL),
                new StripeMap.Block("s2", "v" + volume + "-" + job + "-s0-u2", 8, 0));
        return new StripeMap(volume, job, "rs", 2, 1, 8, 16, status, List.of(new StripeMap.Stripe(0, blocks)),
                new StripeMap.IndexBlock("v" + volume + "-" + job + "-index", List.of("s0", "s1"), 16, 4));
    }

    private static final TypeReference<List<VolumeInfo>> VOLUMES = new TypeReference<>() { };
    private static final TypeReference<List<StoreInfo>> STORES = new TypeReference<>() { };
    private static final TypeReference<List<ReclaimPlan>> RECLAIMS = new TypeReference<>() { };

    @Test
    void everyAnswerReadsAsItsRecordAndWritesBackTheSameJson() throws Exception {
        start(4, false);
        DirectoryClient client = new DirectoryClient(HttpTransport.create(), List.of(directory.address()), ADMIN);

        Health health = check(raw("GET", "/health", null, null), Health.class, false);
        assertThat(health.status()).isEqualTo("ok");
        assertThat(health.cluster()).isEqualTo(directory.directory().meta().clusterId());
        assertThat(health.secured()).isFalse();
        assertThat(health.admin()).isTrue();
        assertThat(client.health().join()).isEqualTo(health);

        // Volumes: created, listed, one by one, sealed.
        List<VolumeInfo> created = check(raw("POST", "/v1/volumes", "{\"count\": 2}", ADMIN), VOLUMES, true);
        assertThat(created).hasSize(2).allMatch(v -> v.state().writable() && v.replicas().size() == 3 && v.reason() == null);
        List<VolumeInfo> more = client.createVolumes(1).join();
        assertThat(more).hasSize(1);
        List<VolumeInfo> all = check(raw("GET", "/v1/volumes", null, null), VOLUMES, true);
        assertThat(all).extracting(VolumeInfo::id).contains(created.get(0).id(), created.get(1).id(), more.get(0).id());
        assertThat(client.volumes().join()).isEqualTo(all);
        int coded = created.get(0).id();
        int sealed = created.get(1).id();
        VolumeInfo one = check(raw("GET", "/v1/volumes/" + sealed, null, null), VolumeInfo.class, true);
        assertThat(client.volume(sealed).join()).isEqualTo(one).isEqualTo(created.get(1));
        VolumeInfo ro = check(raw("POST", "/v1/volumes/" + sealed + "/read-only", "{\"reason\": \"operator\"}", ADMIN),
                VolumeInfo.class, true);
        assertThat(ro.state().readOnly()).isTrue();
        assertThat(ro.state().hot()).isTrue();
        assertThat(ro.reason()).isEqualTo("operator");
        assertThat(client.markReadOnly(more.get(0).id(), null).join().state()).isEqualTo(VolumeState.READ_ONLY);

        // Stores, the heartbeat's answer and the volume map.
        List<StoreInfo> stores = check(raw("GET", "/v1/stores", null, null), STORES, true);
        assertThat(stores).hasSize(4).allMatch(s -> s.state().up() && s.state().serving() && s.lastError() == null);
        assertThat(client.stores().join()).isEqualTo(stores);
        String s0 = stores.stream().filter(s -> s.id().equals("s0")).findFirst().orElseThrow().address();
        Wire.HeartbeatAnswer hb = check(raw("POST", "/v1/heartbeat", JSON.writeValueAsString(new Wire.Heartbeat("s0", s0, "r0",
                1L << 30, 1L << 30, List.of())), ADMIN), Wire.HeartbeatAnswer.class, false);
        assertThat(hb.state()).isEqualTo(StoreState.UP);
        assertThat(client.heartbeat(new Wire.Heartbeat("s0", s0, "r0", 1L << 30, 1L << 30, List.of())).join()).isEqualTo(StoreState.UP);
        Wire.VolumeMap vm = check(raw("GET", "/v1/volume-map", null, null), Wire.VolumeMap.class, true);
        assertThat(vm.volumes()).filteredOn(l -> l.id() == sealed).singleElement()
                .satisfies(l -> assertThat(l.state()).isEqualTo(VolumeState.READ_ONLY));
        Wire.Lease lease = check(raw("POST", "/v1/leases", "{\"keys\": 3}", null), Wire.Lease.class, true);
        assertThat(lease.count()).isEqualTo(3);

        // Encoding, deletes on a coded volume, dead keys.
        raw("POST", "/v1/volumes/" + coded + "/read-only", "{}", ADMIN);
        VolumeInfo encoding = check(raw("POST", "/v1/volumes/" + coded + "/encoding", JSON.writeValueAsString(map(coded, "aaaaaaaa",
                StripeMap.PLANNED)), ADMIN), VolumeInfo.class, true);
        assertThat(encoding.state()).isEqualTo(VolumeState.ENCODING);
        assertThat(encoding.state().cold()).isTrue();
        assertThat(encoding.state().coded()).isFalse();
        VolumeInfo committed = check(raw("POST", "/v1/volumes/" + coded + "/encoding/commit", JSON.writeValueAsString(map(coded,
                "aaaaaaaa", StripeMap.PLANNED)), ADMIN), VolumeInfo.class, true);
        assertThat(committed.state()).isEqualTo(VolumeState.ERASURE_CODED);
        assertThat(committed.state().coded()).isTrue();
        assertThat(check(raw("GET", "/v1/volumes/" + coded + "/stripes", null, null), StripeMap.class, true).job()).isEqualTo("aaaaaaaa");
        Wire.DeleteLog log = check(raw("POST", "/v1/volumes/" + coded + "/deletes", "{\"deletes\": [{\"seq\": 0, \"key\": 4294967295, "
                + "\"cookie\": \"abcdef\", \"needles\": 2}]}", null), Wire.DeleteLog.class, true);
        assertThat(log.entries()).singleElement().satisfies(e -> assertThat(e.key()).isEqualTo(4294967295L));
        DeadKeys dead = check(raw("POST", "/v1/volumes/" + coded + "/dead-keys", "{\"keys\": [0, 4294967295]}", null),
                DeadKeys.class, false);
        assertThat(dead.volume()).isEqualTo(coded);
        assertThat(dead.dead()).containsExactly(4294967295L);
        VolumeInfo counted = client.volume(coded).join();
        assertThat(counted.deletedPhotos()).isEqualTo(1);
        assertThat(counted.deletedNeedles()).isEqualTo(2);

        // Reclaim: plan, list, swap, retried swap.
        String begin = "/v1/volumes/" + coded + "/reclaim";
        String plan = JSON.writeValueAsString(map(coded, "bbbbbbbb", StripeMap.PLANNED));
        ReclaimPlan recorded = check(raw("POST", begin + "?expect=aaaaaaaa", plan, ADMIN), ReclaimPlan.class, true);
        assertThat(recorded.replaces()).isEqualTo("aaaaaaaa");
        assertThat(recorded.deletedPhotos()).isEqualTo(1);
        assertThat(recorded.plan()).isEqualTo(map(coded, "bbbbbbbb", StripeMap.PLANNED));
        assertThat(check(raw("GET", begin, null, null), ReclaimPlan.class, true)).isEqualTo(recorded);
        assertThat(check(raw("GET", "/v1/reclaims", null, null), RECLAIMS, true)).containsExactly(recorded);
        ReclaimSwap swap = check(raw("POST", begin + "/commit?expect=aaaaaaaa", plan, ADMIN), ReclaimSwap.class, true);
        assertThat(swap.replaced().job()).isEqualTo("aaaaaaaa");
        assertThat(swap.volume().deletedPhotos()).isZero();
        assertThat(swap.volume().state().coded()).isTrue();
        assertThat(check(raw("POST", begin + "/commit?expect=aaaaaaaa", plan, ADMIN), ReclaimSwap.class, true).replaced()).isNull();

        // The raid lease and the raid hold.
        RaidLease free = check(raw("GET", "/v1/raid-lease", null, null), RaidLease.class, true);
        assertThat(free.holder()).isNull();
        RaidLease held = check(raw("POST", "/v1/raid-lease", "{\"holder\": \"raid-a\", \"ttlMillis\": 60000}", ADMIN),
                RaidLease.class, true);
        assertThat(held.holder()).isEqualTo("raid-a");
        assertThat(held.epoch()).isEqualTo(free.epoch() + 1);
        assertThat(check(raw("GET", "/v1/raid-lease", null, null), RaidLease.class, true)).isEqualTo(held);
        assertThat(check(raw("DELETE", "/v1/raid-lease?holder=raid-a", null, ADMIN), RaidLease.class, true).holder()).isNull();
        assertThat(check(raw("GET", "/v1/raid-hold", null, null), RaidHold.class, false)).isEqualTo(new RaidHold(null));
        assertThat(check(raw("DELETE", "/v1/raid-hold", null, ADMIN), RaidHoldRelease.class, false))
                .isEqualTo(new RaidHoldRelease(null));
        assertThat(client.releaseRaidHold().join()).isEqualTo(new RaidHoldRelease(null));

        // Operator verbs on stores and replicas.
        String victim = one.replicas().get(0);
        String outside = stores.stream().map(StoreInfo::id).filter(id -> !one.replicas().contains(id)).findFirst().orElseThrow();
        StoreInfo draining = check(raw("POST", "/v1/stores/" + victim + "/drain", null, ADMIN), StoreInfo.class, true);
        assertThat(draining.state()).isEqualTo(StoreState.DRAINING);
        assertThat(draining.state().draining() && draining.state().serving() && !draining.state().up()).isTrue();
        VolumeInfo moved = check(raw("POST", "/v1/volumes/" + sealed + "/replicas/move", "{\"from\": \"" + victim + "\", \"to\": \""
                + outside + "\"}", ADMIN), VolumeInfo.class, true);
        assertThat(moved.replicas()).doesNotContain(victim).contains(outside);
        StoreInfo failed = check(raw("POST", "/v1/stores/" + outside + "/fail", "{\"reason\": \"fan\"}", ADMIN), StoreInfo.class, true);
        assertThat(failed.state()).isEqualTo(StoreState.FAILED);
        assertThat(failed.state().serving()).isFalse();
        assertThat(failed.lastError()).isEqualTo("operator: fan");
        StoreInfo back = client.restoreStore(outside).join();
        assertThat(back.state()).isEqualTo(StoreState.UP);
        assertThat(check(raw("POST", "/v1/stores/" + outside + "/restore", null, ADMIN), StoreInfo.class, true)).isEqualTo(back);

        // A backup's manifest, from the HTTP answer and from the client.
        String to = dir.resolve("backup-1").toAbsolutePath().toString();
        BackupManifest m = check(raw("POST", "/v1/backup", JSON.writeValueAsString(Map.of("dir", to)), ADMIN),
                BackupManifest.class, true);
        assertThat(m.dir()).isEqualTo(to);
        assertThat(m.clusterId()).isEqualTo(health.cluster());
        assertThat(m.volumes()).isEqualTo(client.volumes().join().size()); // the lease created one more
        assertThat(m.stores()).isEqualTo(4);
        BackupManifest m2 = client.backup(dir.resolve("backup-2").toAbsolutePath().toString()).join();
        assertThat(m2.format()).isEqualTo(m.format());
        assertThat(m2.keyHighWaterMark()).isEqualTo(m.keyHighWaterMark());
        assertThat(DirectoryBackup.readManifest(Path.of(to))).isEqualTo(m);
    }
}
