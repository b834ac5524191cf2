package io.hayloft.directory.meta;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.s3.Bucket;
import io.hayloft.format.s3.Chunk;
import io.hayloft.format.s3.ObjectRecord;
import io.hayloft.format.s3.Part;
import io.hayloft.format.s3.Pending;
import io.hayloft.format.s3.Upload;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.RocksDB;

/**
 * The namespace's log entries and families: every {@code s3*} change survives its JSON (the Raft
 * log's encoding) and a second apply leaves the same records; a database made before the
 * {@code s3-*} families opens (they are created empty) and keeps its records; a snapshot of such a
 * database installs (its missing families empty the replica's). The counted changes (a bucket's
 * counters moved by amounts) leave exactly the state of the same history in the older changes that
 * carry whole buckets, and an object's inline data lands in {@code s3-inline}, nowhere else.
 */
class NamespaceChangeTest {
    @TempDir
    Path dir;

    private static final Chunk A = new Chunk(1, 10, 7, 100);
    private static final Chunk B = new Chunk(1, 11, 7, 50);

    static List<Change> changes() {
        Bucket b0 = new Bucket("bkt", 1, "r", 0, 0, 0);
        ObjectRecord o = new ObjectRecord("bkt", "k é/1", 100, "e", List.of(A), null, Map.of("CRC32", "x"), "FULL_OBJECT",
                "text/plain", Map.of("Cache-Control", "no"), Map.of("m", "v"), 5);
        Upload u = new Upload("bkt", "k2", "UPLOAD_id-0123456789ab", 6, null, null, null, null, null);
        Pending w = new Pending("p1", Pending.WRITING, List.of(A, B), 4);
        Pending doomed = new Pending("d1", Pending.DOOMED, List.of(B), 7);
        Part part = new Part(1, 50, "pe", List.of(B), null, 8);
        return List.of(new Change.S3PutBucket(b0), new Change.S3Pend(w), new Change.S3PutObject(new Bucket("bkt", 1, "r", 1, 100, 0), o, "p1", doomed),
                new Change.S3Drop("d1"), new Change.S3PutUpload(new Bucket("bkt", 1, "r", 1, 100, 1), u),
                new Change.S3PutPart(u.uploadId(), part, null, null),
                new Change.S3Complete(new Bucket("bkt", 1, "r", 2, 150, 0), new ObjectRecord("bkt", "k2", 50, "m-1", List.of(B),
                        List.of(50L), null, null, null, null, null, 9), u.uploadId(), null),
                new Change.S3Doom(new Pending("p2", Pending.DOOMED, List.of(), 10)),
                new Change.S3PutUpload(new Bucket("bkt", 1, "r", 2, 150, 1), new Upload("bkt", "k3", "u2", 11, null, null, null, null, null)),
                new Change.S3DeleteUpload(new Bucket("bkt", 1, "r", 2, 150, 0), "k3", "u2", null),
                new Change.S3DeleteObject(new Bucket("bkt", 1, "r", 1, 50, 0), "k é/1", new Pending("d2", Pending.DOOMED, List.of(A), 12)),
                new Change.S3PutBucket(new Bucket("other", 13, null, 0, 0, 0)), new Change.S3DeleteBucket("other"));
    }

    @Test
    void everyChangeSurvivesItsJsonAndASecondApply() {
        try (MetaStore meta = MetaStore.open(dir.resolve("db"), true)) {
            for (Change c : changes()) {
                LogEntry e = LogEntry.decode(new LogEntry(3, null, c).encode());
                assertThat(e.change()).isEqualTo(c);
                assertThat(new String(new LogEntry(3, null, c).encode(), StandardCharsets.UTF_8)).contains("\"type\":\"s3");
                e.apply(meta, 3);
                var once = meta.digest();
                e.apply(meta, 3);
                assertThat(meta.digest()).as("second apply of %s", c).isEqualTo(once);
            }
            NamespaceStore ns = meta.namespace();
            assertThat(ns.buckets()).containsExactly(new Bucket("bkt", 1, "r", 1, 50, 0));
            assertThat(ns.object("bkt", "k é/1")).isNull();
            assertThat(ns.object("bkt", "k2").chunks()).containsExactly(B);
            assertThat(ns.upload("bkt", "k2", "UPLOAD_id-0123456789ab")).isNull();
            assertThat(ns.parts("UPLOAD_id-0123456789ab", 0, 10)).isEmpty();
            assertThat(ns.pendings(null, 10)).extracting(Pending::id).containsExactly("d2", "p2");
            assertThat(meta.digest().get("s3-parts").entries()).isZero();
        }
    }

    @Test
    void countedChangesLeaveTheStateOfTheSameHistoryWithWholeBuckets() {
        ObjectRecord o = new ObjectRecord("bkt", "k é/1", 100, "e", List.of(A), null, Map.of("CRC32", "x"), "FULL_OBJECT",
                "text/plain", Map.of("Cache-Control", "no"), Map.of("m", "v"), 5);
        ObjectRecord small = new ObjectRecord("bkt", "small", 3, "e3", null, null, null, null, null, null, null, 6,
                new byte[] {(byte) 0xff, 0, 7});
        ObjectRecord smallAgain = new ObjectRecord("bkt", "small", 1, "e1", List.of(new Chunk(1, 12, 7, 1)), null, null, null,
                null, null, null, 7);
        Upload u = new Upload("bkt", "k2", "UPLOAD_id-0123456789ab", 6, null, null, null, null, null);
        Part part = new Part(1, 50, "pe", List.of(B), null, 8);
        ObjectRecord done = new ObjectRecord("bkt", "k2", 50, "m-1", List.of(B), List.of(50L), null, null, null, null, null, 9);
        Pending w = new Pending("p1", Pending.WRITING, List.of(A, B), 4);
        Pending doomed = new Pending("d1", Pending.DOOMED, List.of(B), 7);
        List<Change> whole = List.of(new Change.S3PutBucket(new Bucket("bkt", 1, "r", 0, 0, 0)), new Change.S3Pend(w),
                new Change.S3PutObject(new Bucket("bkt", 1, "r", 1, 100, 0), o, "p1", doomed),
                new Change.S3PutObject(new Bucket("bkt", 1, "r", 2, 103, 0), small, null, null),
                new Change.S3PutObject(new Bucket("bkt", 1, "r", 2, 101, 0), smallAgain, null, null),
                new Change.S3PutUpload(new Bucket("bkt", 1, "r", 2, 101, 1), u),
                new Change.S3PutPart(u.uploadId(), part, null, null),
                new Change.S3Complete(new Bucket("bkt", 1, "r", 3, 151, 0), done, u.uploadId(), null),
                new Change.S3PutUpload(new Bucket("bkt", 1, "r", 3, 151, 1), new Upload("bkt", "k3", "u2", 11, null, null, null, null, null)),
                new Change.S3DeleteUpload(new Bucket("bkt", 1, "r", 3, 151, 0), "k3", "u2", null),
                new Change.S3DeleteObject(new Bucket("bkt", 1, "r", 2, 51, 0), "k é/1", new Pending("d2", Pending.DOOMED, List.of(A), 12)));
        List<Change> counted = List.of(new Change.S3PutBucket(new Bucket("bkt", 1, "r", 0, 0, 0)), new Change.S3Pend(w),
                new Change.S3PutObjectCounted("bkt", new Change.Counts(1, 100, 0), o, "p1", doomed),
                new Change.S3PutObjectCounted("bkt", new Change.Counts(1, 3, 0), small, null, null),
                new Change.S3PutObjectCounted("bkt", new Change.Counts(0, -2, 0), smallAgain, null, null),
                new Change.S3PutUploadCounted("bkt", new Change.Counts(0, 0, 1), u),
                new Change.S3PutPart(u.uploadId(), part, null, null),
                new Change.S3CompleteCounted("bkt", new Change.Counts(1, 50, -1), done, u.uploadId(), null),
                new Change.S3PutUploadCounted("bkt", new Change.Counts(0, 0, 1), new Upload("bkt", "k3", "u2", 11, null, null, null, null, null)),
                new Change.S3DeleteUploadCounted("bkt", new Change.Counts(0, 0, -1), "k3", "u2", null),
                new Change.S3DeleteObjectCounted("bkt", new Change.Counts(-1, -100, 0), "k é/1", new Pending("d2", Pending.DOOMED, List.of(A), 12)));
        try (MetaStore a = MetaStore.open(dir.resolve("whole"), true); MetaStore b = MetaStore.open(dir.resolve("counted"), true)) {
            long index = 1;
            for (int i = 0; i < whole.size(); i++, index++) {
                LogEntry x = LogEntry.decode(new LogEntry(3, null, whole.get(i)).encode());
                LogEntry y = LogEntry.decode(new LogEntry(3, null, counted.get(i)).encode());
                assertThat(y.change()).as("the JSON of %s", counted.get(i)).isEqualTo(counted.get(i));
                final LogEntry fx = x;
                final LogEntry fy = y;
                a.applyEntry(index, 3, () -> fx.apply(a, 3));
                b.applyEntry(index, 3, () -> fy.apply(b, 3));
                var da = new java.util.LinkedHashMap<>(a.digest());
                var db = new java.util.LinkedHashMap<>(b.digest());
                da.keySet().retainAll(List.of("s3-buckets", "s3-objects", "s3-uploads", "s3-parts", "s3-pending", "s3-inline"));
                db.keySet().retainAll(da.keySet());
                assertThat(db).as("after change %d, %s", i, counted.get(i)).isEqualTo(da);
                if (i == 3) {
                    assertThat(b.namespace().object("bkt", "small")).isEqualTo(small);
                    assertThat(b.digest().get("s3-inline").entries()).isEqualTo(1);
                }
            }
            assertThat(b.namespace().bucket("bkt")).isEqualTo(new Bucket("bkt", 1, "r", 2, 51, 0));
            assertThat(b.namespace().object("bkt", "small")).as("replaced by an object of chunks").isEqualTo(smallAgain);
            assertThat(b.digest().get("s3-inline").entries()).as("its inline data went with it").isZero();
            assertThat(new String(new LogEntry(3, null, counted.get(3)).encode(), StandardCharsets.UTF_8))
                    .as("inline data travels in the log entry as base64").contains("\"inline\":\"/wAH\"");
        }
    }

    @Test
    void aCountOfABucketThatIsGoneMakesNoBucket() {
        try (MetaStore meta = MetaStore.open(dir.resolve("db"), true)) {
            ObjectRecord o = new ObjectRecord("gone", "k", 100, "e", List.of(A), null, null, null, null, null, null, 5);
            meta.applyEntry(1, 3, () -> new Change.S3PutObjectCounted("gone", new Change.Counts(1, 100, 0), o, null, null).apply(meta));
            assertThat(meta.namespace().bucket("gone")).isNull();
            assertThat(meta.namespace().buckets()).isEmpty();
        }
    }

    /** A database as the directory made it before the S3 namespace: the eight families of then. */
    private Path oldDatabase(String name) throws Exception {
        Path db = dir.resolve(name);
        RocksDB.loadLibrary();
        try (var opts = new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true);
             var cfo = new ColumnFamilyOptions()) {
            List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
            for (String family : ColumnFamilies.NAMES.subList(0, 8)) {
                descriptors.add(new ColumnFamilyDescriptor(family.getBytes(StandardCharsets.UTF_8), cfo));
            }
            List<ColumnFamilyHandle> handles = new ArrayList<>();
            try (RocksDB raw = RocksDB.open(opts, db.toString(), descriptors, handles)) {
                raw.put(handles.get(0), "format".getBytes(StandardCharsets.UTF_8), ByteBuffer.allocate(4).putInt(1).array());
                raw.put(handles.get(0), "cluster-id".getBytes(StandardCharsets.UTF_8), "old-cluster".getBytes(StandardCharsets.UTF_8));
                raw.put(handles.get(1), "s1".getBytes(StandardCharsets.UTF_8),
                        "{\"id\":\"s1\",\"address\":\"127.0.0.1:1\",\"rack\":\"r\",\"state\":\"UP\"}".getBytes(StandardCharsets.UTF_8));
                handles.forEach(ColumnFamilyHandle::close);
            }
        }
        return db;
    }

    @Test
    void aDatabaseWithoutTheNamespaceFamiliesOpensAndGetsThem() throws Exception {
        Path db = oldDatabase("old");
        try (MetaStore meta = MetaStore.open(db, false)) {
            assertThat(meta.clusterId()).isEqualTo("old-cluster");
            assertThat(meta.store("s1")).isNotNull();
            assertThat(meta.namespace().buckets()).isEmpty();
            assertThat(meta.digest()).containsKeys("s3-buckets", "s3-objects", "s3-uploads", "s3-parts", "s3-pending", "s3-inline");
            new Change.S3PutBucket(new Bucket("fresh", 1, null, 0, 0, 0)).apply(meta);
        }
        try (MetaStore meta = MetaStore.open(db, false)) {
            assertThat(meta.namespace().bucket("fresh")).isNotNull();
            assertThat(meta.store("s1")).isNotNull();
        }
        assertThat(MetaStore.inspect(db).clusterId()).isEqualTo("old-cluster");
    }

    @Test
    void aSnapshotWithoutTheNamespaceFamiliesInstallsAsAnEmptyNamespace() throws Exception {
        Path old = oldDatabase("snapshot");
        try (MetaStore meta = MetaStore.open(dir.resolve("replica"), true)) {
            changes().forEach(c -> c.apply(meta));
            assertThat(meta.namespace().buckets()).isNotEmpty();
            meta.replaceContents(old);
            assertThat(meta.namespace().buckets()).isEmpty();
            assertThat(meta.namespace().pendings(null, 10)).isEmpty();
            assertThat(meta.clusterId()).isEqualTo("old-cluster");
            assertThat(meta.store("s1")).isNotNull();
        }
    }
}
