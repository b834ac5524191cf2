package io.hayloft.directory.meta;

import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.wire.StripeMap;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.RocksDB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.format.directory.StoreState;
import io.hayloft.format.directory.VolumeState;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MetaStoreTest {

    @TempDir
    Path dir;

    @Test
    void everythingSurvivesAReopen() {
        Path db = dir.resolve("db");
        String cluster;
        try (MetaStore m = MetaStore.open(db, true)) {
            cluster = m.clusterId();
            m.putStore(new StoreInfo("s1", "127.0.0.1:7001", "r1", 1000, 900, 5, StoreState.UP, 0, null));
            m.putVolume(new VolumeInfo(m.nextVolumeId(), VolumeState.WRITABLE, List.of("s1", "s2"), 10, 100, 7, null));
            m.appendDeletes(1, List.of(new MetaStore.DeleteRecord(1, 42, 0xC0FFEEL, 2),
                    new MetaStore.DeleteRecord(2, -1L >>> 1, -1L, 0)), null);
        }
        try (MetaStore m = MetaStore.open(db, false)) {
            assertThat(m.clusterId()).isEqualTo(cluster);
            assertThat(m.stores()).containsExactly(new StoreInfo("s1", "127.0.0.1:7001", "r1", 1000, 900, 5, StoreState.UP, 0, null));
            assertThat(m.volume(1).replicas()).containsExactly("s1", "s2");
            assertThat(m.nextVolumeId()).isEqualTo(2);
            assertThat(m.deleteHead(1)).isEqualTo(2);
            assertThat(m.deleteEntry(1, 1)).isEqualTo(new MetaStore.DeleteRecord(1, 42, 0xC0FFEEL, 2));
            assertThat(m.deleteSeq(1, Long.MAX_VALUE, -1L)).isEqualTo(2);
            assertThat(m.deleteSeq(1, 42, 0xC0FFEEL)).isEqualTo(1);
            assertThat(m.deleteSeq(1, 42, 0xC0FFEFL)).as("another cookie of the same key").isZero();
            assertThat(m.anyDelete(1, 42)).isTrue();
            assertThat(m.deleteSeq(1, 43, 0xC0FFEEL)).isZero();
            assertThat(m.anyDelete(1, 43)).isFalse();
            assertThat(m.anyDelete(1, 41)).isFalse();
        }
    }

    @Test
    void aMissingDatabaseIsAnErrorNotAnEmptyCluster() {
        assertThatThrownBy(() -> MetaStore.open(dir.resolve("nothing"), false))
                .isInstanceOf(MetaStoreException.class).hasMessageContaining("no directory database at")
                .hasMessageContaining("--init");
        assertThat(dir.resolve("nothing")).doesNotExist();
    }

    @Test
    void aForeignDirectoryIsRefused() throws Exception {
        Path other = Files.createDirectories(dir.resolve("other"));
        Files.writeString(other.resolve("photo.jpg"), "not a database");
        assertThatThrownBy(() -> MetaStore.open(other, true))
                .isInstanceOf(MetaStoreException.class).hasMessageContaining("is not a directory database");
    }

    @Test
    void aCorruptDatabaseIsAnError() throws Exception {
        Path db = dir.resolve("db");
        try (MetaStore m = MetaStore.open(db, true)) {
            m.putStore(new StoreInfo("s1", "127.0.0.1:7001", "r1", 1000, 900, 5, StoreState.UP, 0, null));
        }
        try (var files = Files.list(db)) {
            for (Path p : files.filter(p -> p.getFileName().toString().startsWith("MANIFEST")).toList()) {
                Files.write(p, new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
            }
        }
        assertThatThrownBy(() -> MetaStore.open(db, false))
                .isInstanceOf(MetaStoreException.class).hasMessageContaining("cannot open the directory database");
    }

    @Test
    void aVolumeAndItsStripeMapAreWrittenTogetherAndSurviveAReopen() {
        Path db = dir.resolve("db");
        VolumeInfo v = new VolumeInfo(7, VolumeState.ENCODING, List.of("a"), 10, 100, 1, "job");
        StripeMap map = new StripeMap(7, "0000abcd", "hh-xor+", 2, 1, 16, 20, StripeMap.PLANNED,
                List.of(new StripeMap.Stripe(0, List.of(new StripeMap.Block("a", "x0", 0, 0),
                        new StripeMap.Block("b", "x1", 0, 0), new StripeMap.Block("c", "x2", 0, 0)))),
                new StripeMap.IndexBlock("i", List.of("a"), 0, 0));
        try (MetaStore m = MetaStore.open(db, true)) {
            m.putVolumeAndStripes(v, map);
        }
        try (MetaStore m = MetaStore.open(db, false)) {
            assertThat(m.volume(7)).isEqualTo(v);
            assertThat(m.stripeMap(7)).isEqualTo(map);
            assertThat(m.stripeMaps()).containsExactly(map);
            m.putVolumeAndStripes(v.withState(VolumeState.READ_ONLY, "rolled back"), null);
            assertThat(m.stripeMap(7)).isNull();
            assertThat(m.volume(7).state()).isEqualTo(VolumeState.READ_ONLY);
            assertThatThrownBy(() -> m.putVolumeAndStripes(new VolumeInfo(8, VolumeState.ENCODING,
                    List.of(), 0, 0, 0, null), map)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("stripe map of volume 7 written with volume 8");
        }
    }

    @Test
    void anotherFormatIsRefused() throws Exception {
        Path db = dir.resolve("db");
        try (MetaStore m = MetaStore.open(db, true)) {
            m.putStore(new StoreInfo("s1", "127.0.0.1:7001", "r1", 1000, 900, 5, StoreState.UP, 0, null));
        }
        RocksDB.loadLibrary();
        try (var opts = new DBOptions();
             var cfo = new ColumnFamilyOptions()) {
            List<ColumnFamilyHandle> handles = new ArrayList<>();
            List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
            for (String name : ColumnFamilies.NAMES) {
                descriptors.add(new ColumnFamilyDescriptor(name.getBytes(StandardCharsets.UTF_8), cfo));
            }
            try (RocksDB raw = RocksDB.open(opts, db.toString(), descriptors, handles)) {
                raw.put(handles.get(0), "format".getBytes(), ByteBuffer.allocate(4).putInt(99).array());
                handles.forEach(ColumnFamilyHandle::close);
            }
        }
        assertThatThrownBy(() -> MetaStore.open(db, false))
                .isInstanceOf(MetaStoreException.class).hasMessageContaining("format 99, this directory reads format 1");
    }

    @Test
    void aDatabaseWithLegacyPhotoRecordsStillOpensAndIgnoresThem() throws Exception {
        Path db = dir.resolve("db");
        String cluster;
        try (MetaStore m = MetaStore.open(db, true)) {
            cluster = m.clusterId();
        }
        // A record of the removed per-photo API (PhotoMeta, version 1) in the legacy photos family.
        RocksDB.loadLibrary();
        try (var opts = new DBOptions();
             var cfo = new ColumnFamilyOptions()) {
            List<ColumnFamilyHandle> handles = new ArrayList<>();
            List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
            for (String name : ColumnFamilies.NAMES) {
                descriptors.add(new ColumnFamilyDescriptor(name.getBytes(StandardCharsets.UTF_8), cfo));
            }
            try (RocksDB raw = RocksDB.open(opts, db.toString(), descriptors, handles)) {
                raw.put(handles.get(3), ByteBuffer.allocate(8).putLong(42).array(),
                        new byte[] {1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0});
                handles.forEach(ColumnFamilyHandle::close);
            }
        }
        try (MetaStore m = MetaStore.open(db, false)) {
            assertThat(m.clusterId()).isEqualTo(cluster);
            assertThat(m.anyDelete(1, 42)).as("an old tombstone is not a delete-log entry").isFalse();
        }
        assertThat(MetaStore.inspect(db).deleteLogEntries()).isZero();
    }

    @Test
    void deleteLogsAreNumberedPerVolumeAndTheirHeadsComeBackOnReopen() {
        Path db = dir.resolve("db");
        try (MetaStore m = MetaStore.open(db, true)) {
            m.putVolume(new VolumeInfo(1, VolumeState.WRITABLE, List.of("s0"), 0, 1 << 20, 0, null));
            m.putVolume(new VolumeInfo(2, VolumeState.WRITABLE, List.of("s0"), 0, 1 << 20, 0, null));
            assertThat(m.nextDeleteSeq(1)).isEqualTo(1);
            long changes = m.changes();
            m.appendDeletes(1, List.of(new MetaStore.DeleteRecord(1, 0, -1L, 2), new MetaStore.DeleteRecord(2, Long.MAX_VALUE, 5, 0)),
                    null);
            assertThat(m.changes()).isGreaterThan(changes);
            m.appendDeletes(2, List.of(new MetaStore.DeleteRecord(1, 7, 7, 1)), null);
            assertThatThrownBy(() -> m.appendDeletes(1, List.of(new MetaStore.DeleteRecord(4, 9, 9, 1)), null))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThat(m.deleteHead(1)).isEqualTo(2);
        }
        try (MetaStore m = MetaStore.open(db, false)) {
            assertThat(m.deleteHead(1)).isEqualTo(2);
            assertThat(m.deleteHead(2)).isEqualTo(1);
            assertThat(m.deleteHead(3)).isZero();
            assertThat(m.anyDelete(1, Long.MAX_VALUE)).isTrue();
            assertThat(m.anyDelete(1, 9)).isFalse();
            assertThat(m.deleteEntry(1, 1)).isEqualTo(new MetaStore.DeleteRecord(1, 0, -1L, 2));
            assertThat(m.deletesAfter(1, 0, 10)).extracting(MetaStore.DeleteRecord::key).containsExactly(0L, Long.MAX_VALUE);
            assertThat(m.deletesAfter(1, 1, 10)).hasSize(1);
            assertThat(m.deletesAfter(2, 0, 10)).containsExactly(new MetaStore.DeleteRecord(1, 7, 7, 1));
            m.raiseDeleteFloor(100);
            m.raiseDeleteFloor(50); // never lowers
            assertThat(m.nextDeleteSeq(2)).isEqualTo(101);
            assertThat(m.deleteHead(2)).isEqualTo(1);
        }
        try (MetaStore m = MetaStore.open(db, false)) {
            assertThat(m.nextDeleteSeq(1)).isEqualTo(101);
            assertThat(m.maxDeleteHead()).isEqualTo(100);
        }
    }

    @Test
    void keysAreUniqueAndResumeAboveTheMark() {
        Path db = dir.resolve("db");
        long last;
        try (MetaStore m = MetaStore.open(db, true)) {
            KeyAllocator a = new KeyAllocator(m, 10);
            long first = a.next();
            assertThat(a.next()).isEqualTo(first + 1);
            long batch = a.allocate(25);
            assertThat(batch).isEqualTo(first + 2);
            last = batch + 24;
            assertThat(m.keyHighWaterMark()).isGreaterThan(last);
        }
        try (MetaStore m = MetaStore.open(db, false)) {
            assertThat(new KeyAllocator(m, 10).next()).isGreaterThan(last);
        }
    }

    /** A real JVM allocating keys is killed with SIGKILL; keys it printed are never handed out again. */
    @Test
    void keysAreNeverReusedAfterKillMinus9() throws Exception {
        Path db = dir.resolve("db");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        long maxSeen = 0;
        for (int round = 0; round < 3; round++) {
            Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                    AllocatorProcess.class.getName(), db.toString()).redirectErrorStream(false).start();
            long seenThisRound = 0;
            try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (int i = 0; i < 500; i++) {
                    String line = out.readLine();
                    assertThat(line).as("allocator process output (stderr: %s)", "see test log").isNotNull();
                    long key = Long.parseLong(line.trim());
                    assertThat(key).as("key %d handed out again after a kill", key).isGreaterThan(maxSeen);
                    maxSeen = key;
                    seenThisRound++;
                }
                p.destroyForcibly();
                assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
            }
            assertThat(seenThisRound).isEqualTo(500);
        }
    }

    /** Allocates keys one by one from the database given as argument, printing each once durable. */
    public static final class AllocatorProcess {
        public static void main(String[] args) {
            MetaStore m = MetaStore.open(Path.of(args[0]), true);
            KeyAllocator a = new KeyAllocator(m, 7);
            while (true) {
                System.out.println(a.next());
                System.out.flush();
            }
        }
    }
}
