package io.hayloft.format.directory;

import java.util.Map;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.wire.Wire;
import org.junit.jupiter.api.Test;

/**
 * The records of the directory's answers against JSON shaped as docs/directory-api.md gives it, with a
 * plain {@link ObjectMapper} (no configuration: the records' own annotations must make them tolerant):
 * each reads its JSON, writes back the same bytes (fields in the directory's order), and reads the same JSON with unknown
 * fields added (at the top and inside nested records) to an equal record. What the real directory
 * answers is checked by {@code io.hayloft.directory.DirectoryRecordsTest} (cli module).
 */
class DirectoryRecordsJsonTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static final String STRIPE_MAP = "{\"volume\":7,\"job\":\"aaaaaaaa\",\"codec\":\"hh-xor+\",\"k\":2,\"r\":1,"
            + "\"blockSize\":8,\"volumeBytes\":16,\"status\":\"COMMITTED\",\"stripes\":[{\"index\":0,\"blocks\":["
            + "{\"store\":\"s0\",\"name\":\"v7-aaaaaaaa-s0-u0\",\"length\":8,\"crc32c\":1},"
            + "{\"store\":\"s1\",\"name\":\"v7-aaaaaaaa-s0-u1\",\"length\":8,\"crc32c\":4294967295},"
            + "{\"store\":\"s2\",\"name\":\"v7-aaaaaaaa-s0-u2\",\"length\":8,\"crc32c\":0}]}],"
            + "\"index\":{\"name\":\"v7-aaaaaaaa-index\",\"holders\":[\"s0\",\"s1\"],\"length\":16,\"crc32c\":4}}";
    private static final String VOLUME = "{\"id\":7,\"state\":\"ERASURE_CODED\",\"replicas\":[],\"sizeBytes\":16,"
            + "\"limitBytes\":1073741824,\"created\":1700000000000,\"reason\":\"operator\",\"deletedPhotos\":1,\"deletedNeedles\":3}";

    /** Reads {@code json} as {@code type}, checks the round trip and the tolerance of unknown fields; returns the record. */
    private static <T> T roundTrip(String json, Class<T> type) throws Exception {
        JsonNode tree = JSON.readTree(json);
        T t = JSON.readValue(json, type);
        // byte for byte: the same fields, in the same order, with the same values
        assertThat(JSON.writeValueAsString(t)).as("%s written back", type.getSimpleName()).isEqualTo(JSON.writeValueAsString(tree));
        JsonNode future = addUnknown(tree.deepCopy());
        assertThat(JSON.treeToValue(future, type)).as("%s with unknown fields", type.getSimpleName()).isEqualTo(t);
        return t;
    }

    /** Adds a field no version knows to every record in the tree, nested ones too (not to maps: {@code deleteHeads}). */
    private static JsonNode addUnknown(JsonNode n) {
        if (n.isObject()) {
            n.fields().forEachRemaining(e -> {
                if (!e.getKey().equals("deleteHeads")) {
                    addUnknown(e.getValue());
                }
            });
            ((ObjectNode) n).putObject("fieldOfALaterVersion").put("x", 1).putArray("y").add("z");
        } else if (n.isArray()) {
            n.forEach(DirectoryRecordsJsonTest::addUnknown);
        }
        return n;
    }

    @Test
    void volumeInfo() throws Exception {
        VolumeInfo v = roundTrip(VOLUME, VolumeInfo.class);
        assertThat(v.state().coded()).isTrue();
        assertThat(v.deletedNeedles()).isEqualTo(3);
        VolumeInfo w = roundTrip("{\"id\":2147483647,\"state\":\"WRITABLE\",\"replicas\":[\"s0\",\"s1\",\"s2\"],\"sizeBytes\":0,"
                + "\"limitBytes\":1,\"created\":0,\"reason\":null,\"deletedPhotos\":0,\"deletedNeedles\":0}", VolumeInfo.class);
        assertThat(w.replicas()).containsExactly("s0", "s1", "s2");
        assertThat(w.reason()).isNull();
        // a record of an older directory without the delete counters, or without replicas
        VolumeInfo old = JSON.readValue("{\"id\":3,\"state\":\"READ_ONLY\",\"sizeBytes\":1,\"limitBytes\":2,\"created\":3}",
                VolumeInfo.class);
        assertThat(old.replicas()).isEmpty();
        assertThat(old.deletedPhotos()).isZero();
    }

    @Test
    void storeInfo() throws Exception {
        StoreInfo s = roundTrip("{\"id\":\"store-0\",\"address\":\"127.0.0.1:7001\",\"rack\":\"rack-0\",\"capacityBytes\":1099511627776,"
                + "\"freeBytes\":0,\"lastHeartbeatMillis\":1700000000000,\"state\":\"DRAINING\",\"failures\":2,"
                + "\"lastError\":\"operator: fan\"}", StoreInfo.class);
        assertThat(s.state().serving()).isTrue();
        assertThat(s.state().up()).isFalse();
        assertThat(roundTrip("{\"id\":\"s\",\"address\":\"h:1\",\"rack\":null,\"capacityBytes\":0,\"freeBytes\":0,"
                + "\"lastHeartbeatMillis\":0,\"state\":\"UP\",\"failures\":0,\"lastError\":null}", StoreInfo.class).lastError()).isNull();
    }

    @Test
    void reclaimPlanAndSwap() throws Exception {
        ReclaimPlan p = roundTrip("{\"replaces\":\"aaaaaaaa\",\"deletedPhotos\":1,\"deletedNeedles\":2,\"plan\":"
                + STRIPE_MAP.replace("COMMITTED", "PLANNED").replace("aaaaaaaa", "bbbbbbbb") + "}", ReclaimPlan.class);
        assertThat(p.plan().job()).isEqualTo("bbbbbbbb");
        assertThat(p.plan().status()).isEqualTo(StripeMap.PLANNED);
        ReclaimSwap swap = roundTrip("{\"volume\":" + VOLUME + ",\"replaced\":" + STRIPE_MAP + "}", ReclaimSwap.class);
        assertThat(swap.replaced().stripes().get(0).blocks().get(1).crc32c()).isEqualTo(0xffffffffL);
        assertThat(roundTrip("{\"volume\":" + VOLUME + ",\"replaced\":null}", ReclaimSwap.class).replaced()).isNull();
    }

    @Test
    void raidLeaseHoldAndRelease() throws Exception {
        assertThat(roundTrip("{\"holder\":\"raid-a\",\"expiresMillis\":1010000,\"epoch\":1}", RaidLease.class))
                .isEqualTo(new RaidLease("raid-a", 1_010_000, 1));
        assertThat(roundTrip("{\"holder\":null,\"expiresMillis\":0,\"epoch\":9223372036854775807}", RaidLease.class).holder()).isNull();
        assertThat(roundTrip("{\"hold\":\"restored from /b\"}", RaidHold.class).hold()).isEqualTo("restored from /b");
        assertThat(roundTrip("{\"hold\":null}", RaidHold.class).hold()).isNull();
        assertThat(roundTrip("{\"released\":null}", RaidHoldRelease.class).released()).isNull();
        assertThat(roundTrip("{\"released\":\"why\"}", RaidHoldRelease.class).released()).isEqualTo("why");
    }

    @Test
    void healthBackupAndDeadKeys() throws Exception {
        Health h = roundTrip("{\"status\":\"ok\",\"cluster\":\"c-1\",\"secured\":true,\"admin\":false}", Health.class);
        assertThat(h.secured()).isTrue();
        assertThat(h.admin()).isFalse();
        Health older = JSON.readValue("{\"status\":\"ok\"}", Health.class);
        assertThat(older.secured()).as("not said is not false").isNull();
        BackupManifest m = roundTrip("{\"format\":1,\"dir\":\"/b\",\"clusterId\":\"c-1\",\"databaseFormat\":3,\"keyHighWaterMark\":1000000,"
                + "\"volumeSequence\":4,\"stores\":3,\"volumes\":3,\"deleteLogEntries\":0,\"files\":9,\"bytes\":12345,"
                + "\"createdMillis\":1700000000000,\"millis\":12}", BackupManifest.class);
        assertThat(m.keyHighWaterMark()).isEqualTo(1_000_000);
        DeadKeys d = roundTrip("{\"volume\":7,\"dead\":[0,4294967295,9223372036854775807]}", DeadKeys.class);
        assertThat(d.dead()).containsExactly(0L, 4294967295L, Long.MAX_VALUE);
        assertThat(roundTrip("{\"volume\":7,\"dead\":[]}", DeadKeys.class).dead()).isEmpty();
    }

    @Test
    void theHotPathRecordsCarryTypedStates() throws Exception {
        Wire.VolumeLocation l = roundTrip("{\"id\":1,\"state\":\"REPAIRING\",\"replicas\":[],\"down\":[\"h:2\"],\"deleteHead\":5}",
                Wire.VolumeLocation.class);
        assertThat(l.state()).isEqualTo(VolumeState.REPAIRING);
        Wire.HeartbeatAnswer a = roundTrip("{\"storeId\":\"s0\",\"state\":\"FAILED\",\"deleteHeads\":{\"2147483647\":7}}",
                Wire.HeartbeatAnswer.class);
        assertThat(a.state()).isEqualTo(StoreState.FAILED);
        assertThat(a.deleteHeads()).containsExactly(Map.entry(Integer.MAX_VALUE, 7L)); // one entry: a map's order is not kept
    }
}
