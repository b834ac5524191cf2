package io.hayloft.directory.meta;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.directory.ReclaimPlan;
import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.directory.StoreState;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.VolumeState;
import io.hayloft.format.s3.Bucket;
import io.hayloft.format.s3.Chunk;
import io.hayloft.format.s3.ObjectRecord;
import io.hayloft.format.s3.Part;
import io.hayloft.format.s3.Pending;
import io.hayloft.format.s3.Upload;
import io.hayloft.format.wire.StripeMap;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

/**
 * The directory database's column families are found by their on-disk names, which never change:
 * the names are spelled out here, not taken from {@link ColumnFamilies}, so a rename or a reordering
 * fails this test rather than leaving existing databases unreadable.
 */
class ColumnFamiliesTest {

    /** The on-disk names of every directory database of format 1, in order. Never edit; only append. */
    private static final List<String> ON_DISK = List.of("default", "stores", "volumes", "photos", "stripes", "reclaims",
            "deletes", "delete-keys", "s3-buckets", "s3-objects", "s3-uploads", "s3-parts", "s3-pending", "s3-inline");

    private static final Chunk CHUNK = new Chunk(1, 42, 7, 10);

    @TempDir
    Path dir;

    @Test
    void theOnDiskNamesAndTheirOrderNeverChange() throws Exception {
        assertThat(ColumnFamilies.NAMES).containsExactlyElementsOf(ON_DISK);
        assertThat(ColumnFamilies.Family.DEFAULT.onDiskBytes()).isEqualTo(RocksDB.DEFAULT_COLUMN_FAMILY);
        Path db = dir.resolve("db");
        try (MetaStore m = MetaStore.open(db, true)) {
            assertThat(m.digest().keySet()).as("the families of GET /v1/state, in order").containsExactlyElementsOf(ON_DISK);
        }
        List<String> listed = new ArrayList<>();
        try (Options o = new Options()) {
            for (byte[] n : RocksDB.listColumnFamilies(o, db.toString())) {
                listed.add(new String(n, StandardCharsets.UTF_8));
            }
        }
        assertThat(listed).as("the families a new database has on disk").containsExactlyElementsOf(ON_DISK);
    }

    @Test
    void recordsLandInTheFamilyOfTheirNameAndAreReadBackFromIt() throws Exception {
        Path db = dir.resolve("db");
        StoreInfo store = new StoreInfo("s1", "127.0.0.1:7001", "r1", 1000, 900, 5, StoreState.UP, 0, null);
        VolumeInfo volume = new VolumeInfo(7, VolumeState.ERASURE_CODED, List.of(), 10, 100, 0, "encoded");
        StripeMap committed = map("aaaaaaaa", StripeMap.COMMITTED);
        ReclaimPlan plan = new ReclaimPlan("aaaaaaaa", 1, 2, map("bbbbbbbb", StripeMap.PLANNED));
        ObjectRecord object = new ObjectRecord("bkt", "k", 10, "e", List.of(CHUNK), null, null, null, null, null, null, 3);
        ObjectRecord small = new ObjectRecord("bkt", "small", 3, "e3", null, null, null, null, null, null, null, 4,
                new byte[] {1, 2, 3});
        Upload upload = new Upload("bkt", "big", "UPLOAD_id-0123456789ab", 4, null, null, null, null, null);
        Part part = new Part(1, 10, "pe", List.of(CHUNK), null, 5);
        Pending pending = new Pending("p1", Pending.WRITING, List.of(CHUNK), 6);
        try (MetaStore m = MetaStore.open(db, true)) {
            m.putStore(store);
            m.putVolumeAndStripes(volume, committed);
            m.putReclaim(plan);
            m.appendDeletes(7, List.of(new MetaStore.DeleteRecord(1, 42, 0xC0FFEEL, 2)), null);
            m.namespace().write(b -> {
                b.putBucket(new Bucket("bkt", 1, "r", 1, 10, 1));
                b.putObject(object);
                b.putObject(small);
                b.putUpload(upload);
                b.putPart(upload.uploadId(), part);
                b.putPending(pending);
            });
        }

        Map<String, List<String>> keys = rawKeys(db);
        assertThat(keys.get("default")).contains("format", "cluster-id");
        assertThat(keys.get("stores")).containsExactly("s1");
        assertThat(keys.get("volumes")).containsExactly(hex(MetaStore.intKey(7)));
        assertThat(keys.get("photos")).isEmpty();
        assertThat(keys.get("stripes")).containsExactly(hex(MetaStore.intKey(7)));
        assertThat(keys.get("reclaims")).containsExactly(hex(MetaStore.intKey(7)));
        assertThat(keys.get("deletes")).containsExactly(hex(MetaStore.volumeKey(7, 1)));
        assertThat(keys.get("delete-keys")).containsExactly(hex(MetaStore.deleteKey(7, 42, 0xC0FFEEL)));
        assertThat(keys.get("s3-buckets")).containsExactly("bkt");
        assertThat(keys.get("s3-objects")).containsExactly(hex(NamespaceStore.objectKey("bkt", "k")),
                hex(NamespaceStore.objectKey("bkt", "small")));
        assertThat(keys.get("s3-inline")).as("the inline data beside its record, under the same key")
                .containsExactly(hex(NamespaceStore.objectKey("bkt", "small")));
        assertThat(keys.get("s3-uploads")).containsExactly(hex(NamespaceStore.uploadKey("bkt", "big", upload.uploadId())));
        assertThat(keys.get("s3-parts")).containsExactly(hex(NamespaceStore.partKey(upload.uploadId(), 1)));
        assertThat(keys.get("s3-pending")).containsExactly("p1");

        try (MetaStore m = MetaStore.open(db, false)) {
            assertThat(m.store("s1")).isEqualTo(store);
            assertThat(m.volume(7)).isEqualTo(volume);
            assertThat(m.stripeMap(7)).isEqualTo(committed);
            assertThat(m.reclaim(7)).isEqualTo(plan);
            assertThat(m.deleteHead(7)).isEqualTo(1);
            assertThat(m.deleteSeq(7, 42, 0xC0FFEEL)).isEqualTo(1);
            NamespaceStore ns = m.namespace();
            assertThat(ns.bucket("bkt")).isEqualTo(new Bucket("bkt", 1, "r", 1, 10, 1));
            assertThat(ns.object("bkt", "k")).isEqualTo(object);
            assertThat(ns.object("bkt", "small")).isEqualTo(small);
            assertThat(ns.list("bkt", null, null, null, 10).objects()).as("a listing carries no inline data")
                    .containsExactly(object, small.withInline(null));
            assertThat(ns.upload("bkt", "big", upload.uploadId())).isEqualTo(upload);
            assertThat(ns.parts(upload.uploadId(), 0, 10)).containsExactly(part);
            assertThat(ns.pending("p1")).isEqualTo(pending);
        }
    }

    @Test
    void aDatabaseWrittenByNameOnlyOpensWithItsRecords() throws Exception {
        // What an older directory left behind: records put in the families of those names, nothing else.
        Path db = dir.resolve("db");
        RocksDB.loadLibrary();
        try (DBOptions opts = new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true);
             ColumnFamilyOptions cfo = new ColumnFamilyOptions()) {
            List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
            for (String name : ON_DISK) {
                descriptors.add(new ColumnFamilyDescriptor(name.getBytes(StandardCharsets.UTF_8), cfo));
            }
            List<ColumnFamilyHandle> handles = new ArrayList<>();
            try (RocksDB raw = RocksDB.open(opts, db.toString(), descriptors, handles)) {
                raw.put(handles.get(ON_DISK.indexOf("default")), utf8("format"), ByteBuffer.allocate(4).putInt(1).array());
                raw.put(handles.get(ON_DISK.indexOf("default")), utf8("cluster-id"), utf8("old-cluster"));
                raw.put(handles.get(ON_DISK.indexOf("stores")), utf8("s1"),
                        utf8("{\"id\":\"s1\",\"address\":\"127.0.0.1:1\",\"rack\":\"r\",\"state\":\"UP\"}"));
                raw.put(handles.get(ON_DISK.indexOf("volumes")), MetaStore.intKey(3),
                        utf8("{\"id\":3,\"state\":\"WRITABLE\",\"replicas\":[\"s1\"],\"sizeBytes\":0,\"limitBytes\":100}"));
                raw.put(handles.get(ON_DISK.indexOf("deletes")), MetaStore.volumeKey(3, 4),
                        ByteBuffer.allocate(MetaStore.DELETE_ENTRY_SIZE).putLong(9).putLong(8).putInt(1).array());
                raw.put(handles.get(ON_DISK.indexOf("s3-buckets")), utf8("old"),
                        utf8("{\"name\":\"old\",\"created\":1,\"region\":\"r\",\"objects\":0,\"bytes\":0,\"uploads\":0}"));
                handles.forEach(ColumnFamilyHandle::close);
            }
        }
        try (MetaStore m = MetaStore.open(db, false)) {
            assertThat(m.clusterId()).isEqualTo("old-cluster");
            assertThat(m.store("s1").address()).isEqualTo("127.0.0.1:1");
            assertThat(m.volume(3).replicas()).containsExactly("s1");
            assertThat(m.deleteHead(3)).as("the head is derived from the deletes family").isEqualTo(4);
            assertThat(m.deleteEntry(3, 4)).isEqualTo(new MetaStore.DeleteRecord(4, 9, 8, 1));
            assertThat(m.namespace().bucket("old").name()).isEqualTo("old");
        }
    }

    /** Every family's keys (UTF-8 when printable, else hex), read from the database by the names in {@link #ON_DISK}. */
    private static Map<String, List<String>> rawKeys(Path db) throws Exception {
        Map<String, List<String>> out = new LinkedHashMap<>();
        try (DBOptions opts = new DBOptions(); ColumnFamilyOptions cfo = new ColumnFamilyOptions()) {
            List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
            for (String name : ON_DISK) {
                descriptors.add(new ColumnFamilyDescriptor(name.getBytes(StandardCharsets.UTF_8), cfo));
            }
            List<ColumnFamilyHandle> handles = new ArrayList<>();
            try (RocksDB raw = RocksDB.openReadOnly(opts, db.toString(), descriptors, handles)) {
                for (int i = 0; i < ON_DISK.size(); i++) {
                    List<String> keys = new ArrayList<>();
                    try (var it = raw.newIterator(handles.get(i))) {
                        for (it.seekToFirst(); it.isValid(); it.next()) {
                            keys.add(printable(it.key()) ? new String(it.key(), StandardCharsets.UTF_8) : hex(it.key()));
                        }
                        it.status();
                    }
                    out.put(ON_DISK.get(i), keys);
                }
            } finally {
                handles.forEach(ColumnFamilyHandle::close);
            }
        }
        return out;
    }

    private static StripeMap map(String job, String status) {
        return new StripeMap(7, job, "rs", 1, 1, 8, 8, status, List.of(new StripeMap.Stripe(0, List.of(
                new StripeMap.Block("a", "v7-" + job + "-s0-u0", 0, 0), new StripeMap.Block("b", "v7-" + job + "-s0-u1", 0, 0)))),
                new StripeMap.IndexBlock("v7-" + job + "-index", List.of("a"), 0, 0));
    }

    private static boolean printable(byte[] b) {
        for (byte x : b) {
            if (x < 0x20 || x > 0x7e) {
                return false;
            }
        }
        return true;
    }

    private static String hex(byte[] b) {
        return java.util.HexFormat.of().formatHex(b);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
