package io.hayloft.directory.raft;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hayloft.client.DirectoryClient;
import io.hayloft.client.NamespaceClient;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.DirectoryServer;
import io.hayloft.directory.StoreAdmin;
import io.hayloft.directory.meta.MetaStore;
import io.hayloft.format.wire.Wire;
import io.hayloft.testkit.Await;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;
import org.apache.ratis.proto.RaftProtos;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.raftlog.segmented.LogSegment;
import org.apache.ratis.server.raftlog.segmented.LogSegmentPath;
import org.apache.ratis.util.SizeInBytes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.DBOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;

/**
 * Data written by an older directory is read by this one: {@code compat/directory-ee60915.tar.gz}
 * (see the README next to it) holds a Raft replica (group of one, id {@code n1}: its RocksDB, its Ratis
 * log with log-metadata entries, two snapshots) and a single directory's database, both written through
 * the HTTP API by commit ee60915, and the answers that code gave ({@code expected.json}). Each case
 * starts this code on a copy, checks every record against those answers and the per-column-family
 * digests, makes new changes (one with a request id, sent twice), restarts and checks again.
 */
class CompatibilityTest {
    private static final String FIXTURE = "/compat/directory-ee60915.tar.gz";
    private static final String UNICODE = "fotos/Zürich – 東京 🚀.jpg";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient RAW = HttpClient.newHttpClient();
    private static final StoreAdmin STORES = AcceptingStores.INSTANCE;

    @TempDir
    Path dir;
    private JsonNode expected;
    private LocalGroup group;
    private DirectoryServer single;
    private HttpTransport http;

    @BeforeEach
    void unpack() throws IOException {
        try (InputStream in = CompatibilityTest.class.getResourceAsStream(FIXTURE)) {
            assertThat(in).as(FIXTURE).isNotNull();
            untar(new GZIPInputStream(in), dir);
        }
        expected = JSON.readTree(dir.resolve("expected.json").toFile());
        http = HttpTransport.create();
    }

    @AfterEach
    void close() {
        if (group != null) {
            group.close();
        }
        if (single != null) {
            single.close();
        }
    }

    /** The configuration the fixture was written with (ee60915's CompatFixtureGen, README). */
    private static DirectoryConfig base() {
        DirectoryConfig c = new DirectoryConfig();
        c.probeIntervalMillis = 100_000_000;
        c.adminToken = "admin";
        c.replication = 2;
        c.minWritableVolumes = 1;
        return c;
    }

    private LocalGroup startGroup() throws Exception {
        return LocalGroup.builder(1, () -> {
            DirectoryConfig c = base();
            c.raft = new DirectoryConfig.Raft();
            c.raft.electionTimeoutMillis = 300;
            c.raft.snapshotEvery = 1000;
            return c;
        }, dir.resolve("raft")).storeAdmin(STORES).start();
    }

    private DirectoryServer startSingle() throws Exception {
        DirectoryConfig c = base();
        c.dataDir = dir.resolve("single").toString();
        c.port = 0;
        c.init = false;
        return DirectoryServer.start(c, STORES);
    }

    @Test
    void aReplicaOfTheOldGroupRecoversItsLogAndSnapshotAndServesEveryRecord() throws Exception {
        JsonNode exp = expected.get("raft");
        assertWritten(exp);
        Map<String, byte[]> atRest = assertAtRest(RaftChangeLog.databaseDir(dir.resolve("raft/n1")), true, exp);
        group = startGroup();
        awaitApplied(exp);
        assertState(group.server(0).directory().meta(), exp, atRest);
        assertServes(group.address(0), exp);
        String id = newChanges(group.address(0), exp);

        group.stopAll();
        group.startAll();
        group.awaitLeader(Duration.ofSeconds(30));
        assertServesAfterChanges(group.address(0), exp, id);
    }

    /**
     * The replica's database taken back to its first snapshot (index {@code snapshotIndex}) and the
     * snapshot taken at its stop removed: Ratis hands this code the old code's entries after the
     * snapshot (log-metadata and configuration entries among them), and applying them reaches the state
     * the old code reached.
     */
    @Test
    void aReplicaAppliesTheOldLogsEntriesAfterItsSnapshot() throws Exception {
        JsonNode exp = expected.get("raft");
        long snapshotIndex = exp.get("snapshotIndex").asLong();
        long appliedIndex = exp.get("appliedIndex").asLong();
        assertWritten(exp);
        Path db = RaftChangeLog.databaseDir(dir.resolve("raft/n1"));
        Map<String, byte[]> atRest = assertAtRest(db, true, exp);
        Path sm;
        try (Stream<Path> groups = Files.list(RaftChangeLog.raftDir(dir.resolve("raft/n1")))) {
            sm = groups.filter(Files::isDirectory).findFirst().orElseThrow().resolve("sm");
        }
        Path first = sm.resolve("snapshot-1-" + snapshotIndex);
        Path last = sm.resolve("snapshot-1-" + appliedIndex);
        assertThat(first).isDirectory();
        assertThat(last).isDirectory();
        // What this case hands the new code: the old log's entries after the snapshot, of every kind.
        Map<RaftProtos.LogEntryProto.LogEntryBodyCase, Long> after = logEntriesAfter(sm.resolveSibling("current"), snapshotIndex);
        assertThat(after.get(RaftProtos.LogEntryProto.LogEntryBodyCase.STATEMACHINELOGENTRY)).isGreaterThan(10L);
        assertThat(after.get(RaftProtos.LogEntryProto.LogEntryBodyCase.METADATAENTRY)).isGreaterThan(10L);
        delete(last);
        delete(db);
        copy(first, db);
        try (MetaStore m = MetaStore.openReplica(db, false)) {
            // The snapshot's index may be one of Ratis' own entries (configuration, log metadata), which the database does not count.
            assertThat(m.appliedIndex()[0]).isBetween(snapshotIndex - 2, snapshotIndex);
        }

        group = startGroup();
        awaitApplied(exp);
        assertState(group.server(0).directory().meta(), exp, atRest);
        assertServes(group.address(0), exp);
        String id = newChanges(group.address(0), exp);

        group.stopAll();
        group.startAll();
        group.awaitLeader(Duration.ofSeconds(30));
        assertServesAfterChanges(group.address(0), exp, id);
    }

    @Test
    void aSingleDirectoryReadsTheOldDatabase() throws Exception {
        JsonNode exp = expected.get("single");
        assertWritten(exp);
        Map<String, byte[]> atRest = assertAtRest(dir.resolve("single"), false, exp);
        single = startSingle();
        assertState(single.directory().meta(), exp, atRest);
        assertServes(single.address(), exp);
        String id = newChanges(single.address(), exp);

        single.close();
        single = startSingle();
        assertServesAfterChanges(single.address(), exp, id);
    }

    /** How many entries of each kind the Ratis log segments in {@code current} hold after {@code index}. */
    private static Map<RaftProtos.LogEntryProto.LogEntryBodyCase, Long> logEntriesAfter(Path current, long index) throws IOException {
        Map<RaftProtos.LogEntryProto.LogEntryBodyCase, Long> out = new java.util.EnumMap<>(RaftProtos.LogEntryProto.LogEntryBodyCase.class);
        try (Stream<Path> files = Files.list(current)) {
            for (Path f : files.toList()) {
                LogSegmentPath segment = LogSegmentPath.matchLogSegment(f);
                if (segment != null) {
                    LogSegment.readSegmentFile(f.toFile(), segment.getStartEnd(), SizeInBytes.valueOf("64MB"),
                            RaftServerConfigKeys.Log.CorruptionPolicy.EXCEPTION, null, e -> {
                                if (e.getIndex() > index) {
                                    out.merge(e.getLogEntryBodyCase(), 1L, Long::sum);
                                }
                            });
                }
            }
        }
        return out;
    }

    /**
     * {@code expected.json} holds what the generator wrote (README), not just whatever the old code answered:
     * the records are checked here by value (README: what the generator wrote), so a fixture that lost one fails.
     */
    private static void assertWritten(JsonNode exp) {
        assertThat(fields(exp.get("buckets"), "name")).containsExactly("compat", "zweite");
        assertThat(exp.get("buckets").get(0).get("region").asText()).isEqualTo("eu-compat-1");
        assertThat(exp.get("buckets").get(0).get("objects").asLong()).isEqualTo(3);
        assertThat(exp.get("buckets").get(0).get("uploads").asLong()).isEqualTo(1);
        assertThat(fields(exp.at("/objects/compat/objects"), "key")).containsExactly("a/plain", UNICODE, "multi/done");
        assertThat(exp.at("/objects/compat/objects/0/etag").asText()).as("the conditional overwrite").isEqualTo("e-plain-2");
        assertThat(fields(exp.at("/objects/zweite/objects"), "key")).as("'gone' deleted").containsExactly("empty");
        JsonNode unicode = exp.get("unicodeObject");
        assertThat(unicode.get("key").asText()).isEqualTo(UNICODE);
        assertThat(unicode.get("etag").asText()).isEqualTo("e-unicode");
        assertThat(unicode.get("size").asLong()).isEqualTo(2000);
        assertThat(unicode.get("contentType").asText()).isEqualTo("image/jpeg");
        assertThat(unicode.at("/checksums/CRC32C").asText()).isEqualTo("AAAAAA==");
        assertThat(unicode.get("metadata").get("städte").asText()).isEqualTo("Zürich,東京");
        JsonNode done = exp.get("doneObject");
        assertThat(done.get("etag").asText()).isEqualTo("e-done-2");
        assertThat(done.get("size").asLong()).isEqualTo((5L << 20) + 3);
        assertThat(done.get("partSizes")).hasSize(2);
        assertThat(fields(exp.at("/uploads/uploads"), "key")).containsExactly("multi/open");
        assertThat(exp.at("/uploads/uploads/0/uploadId").asText()).isEqualTo(exp.get("openUpload").asText());
        assertThat(fields(exp.get("parts"), "etag")).containsExactly("p1", "p2");
        assertThat(fields(exp.get("pendings"), "state")).containsExactlyInAnyOrder("WRITING", "DOOMED", "DOOMED");
        assertThat(fields(exp.get("stores"), "id")).containsExactly("s1", "s2", "s3", "s4");
        assertThat(fields(exp.get("volumes"), "state")).containsExactly("READ_ONLY", "WRITABLE", "WRITABLE");
        assertThat(exp.get("volumes").get(0).get("id").asInt()).isEqualTo(exp.get("readOnlyVolume").asInt());
        assertThat(exp.get("volumes").get(0).get("reason").asText()).isEqualTo("compat fixture");
        assertThat(fields(exp.at("/deleteLog/entries"), "cookie")).containsExactly("00000000000000ab", "00000000000000cd",
                "00000000000000ef");
        assertThat(exp.at("/deleteLog/head").asLong()).isEqualTo(3);
        assertThat(exp.at("/raidLease/holder").asText()).isEqualTo("raid-compat");
        assertThat(exp.at("/lease/count").asLong()).isEqualTo(1000);
    }

    /** Each element's own {@code field} (not those of nested records, as {@code findValuesAsText} would). */
    private static List<String> fields(JsonNode array, String field) {
        List<String> out = new ArrayList<>();
        array.forEach(e -> out.add(e.get(field).asText()));
        return out;
    }

    private void awaitApplied(JsonNode exp) throws InterruptedException {
        long index = exp.get("appliedIndex").asLong();
        Await.until("the replica applied the old log up to " + index, Duration.ofSeconds(30), () -> group.appliedIndex(0) >= index);
    }

    /**
     * The database as the old code left it, opened by this code's {@link MetaStore} before anything
     * starts over it: every column family holds exactly the records of {@code expected.json}'s digest
     * ({@code raft-applied} aside). Returns the default family's records, for {@link #assertState}.
     */
    private static Map<String, byte[]> assertAtRest(Path db, boolean replica, JsonNode exp) throws Exception {
        try (MetaStore m = replica ? MetaStore.openReplica(db, false) : MetaStore.open(db, false, true)) {
            assertDigest(m, exp, List.of());
        }
        return defaultFamily(db);
    }

    /**
     * The state once this code runs over the old data: every family but the default one as the old
     * code left it; in the default one the same records, but for {@code key-hwm} and {@code raft-applied},
     * which only grow (a leader reserves a key range when its term begins, as the old code did too).
     */
    private static void assertState(MetaStore meta, JsonNode exp, Map<String, byte[]> atRest) throws Exception {
        assertDigest(meta, exp, List.of("default"));
        Map<String, byte[]> now = defaultFamily(meta);
        assertThat(now.keySet()).isEqualTo(atRest.keySet());
        for (Map.Entry<String, byte[]> e : atRest.entrySet()) {
            byte[] v = now.get(e.getKey());
            if (e.getKey().equals("key-hwm") || e.getKey().equals("raft-applied")) {
                assertThat(ByteBuffer.wrap(v).getLong()).as(e.getKey()).isGreaterThanOrEqualTo(ByteBuffer.wrap(e.getValue()).getLong());
            } else {
                assertThat(v).as(e.getKey()).isEqualTo(e.getValue());
            }
        }
    }

    /** Column families added since the fixture was made: opening the old database creates them empty. */
    private static final List<String> ADDED_SINCE = List.of("s3-inline");

    private static void assertDigest(MetaStore meta, JsonNode exp, List<String> skipped) {
        JsonNode digest = tree(meta.digest());
        List<String> families = new ArrayList<>();
        exp.get("digest").fieldNames().forEachRemaining(families::add);
        families.addAll(ADDED_SINCE);
        assertThat(digest.fieldNames()).toIterable().containsExactlyInAnyOrderElementsOf(families);
        for (String added : ADDED_SINCE) {
            assertThat(digest.get(added).get("entries").asLong()).as("column family " + added + " (added since)").isZero();
        }
        exp.get("digest").fields().forEachRemaining(f -> {
            if (!skipped.contains(f.getKey())) {
                assertThat(digest.get(f.getKey())).as("column family " + f.getKey()).isEqualTo(f.getValue());
            }
        });
    }

    /** The default column family's records of the (closed) database at {@code db}, read with RocksDB itself. */
    private static Map<String, byte[]> defaultFamily(Path db) throws RocksDBException {
        RocksDB.loadLibrary();
        List<ColumnFamilyDescriptor> families = new ArrayList<>();
        try (Options o = new Options()) {
            for (byte[] n : RocksDB.listColumnFamilies(o, db.toString())) {
                families.add(new ColumnFamilyDescriptor(n));
            }
        }
        List<ColumnFamilyHandle> handles = new ArrayList<>();
        Map<String, byte[]> out = new TreeMap<>();
        try (DBOptions o = new DBOptions(); RocksDB r = RocksDB.openReadOnly(o, db.toString(), families, handles)) {
            try (RocksIterator it = r.newIterator(handles.get(0))) {
                for (it.seekToFirst(); it.isValid(); it.next()) {
                    out.put(new String(it.key(), StandardCharsets.UTF_8), it.value());
                }
            } finally {
                handles.forEach(ColumnFamilyHandle::close);
            }
        }
        return out;
    }

    /** The default column family of a running directory: its digest is not enough, so its records by name. */
    private static Map<String, byte[]> defaultFamily(MetaStore meta) throws RocksDBException {
        Path checkpoint = meta.path().resolveSibling(meta.path().getFileName() + "-check-" + UUID.randomUUID());
        meta.checkpoint(checkpoint);
        return defaultFamily(checkpoint);
    }

    /** {@code o} as the tree its JSON text reads as (numbers typed as in {@code expected.json}: a long that fits is an int). */
    private static JsonNode tree(Object o) {
        try {
            return JSON.readTree(JSON.writeValueAsString(o));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static JsonNode get(NamespaceClient ns, java.util.function.Function<NamespaceClient, CompletableFuture<?>> call) {
        return tree(call.apply(ns).join());
    }

    /** The answers the old code gave, given again by this code. */
    private void assertServes(String address, JsonNode exp) throws Exception {
        DirectoryClient dc = new DirectoryClient(http, List.of(address), "admin");
        NamespaceClient ns = new NamespaceClient(dc);
        assertThat(tree(dc.stores().join())).isEqualTo(exp.get("stores"));
        assertServesRecords(address, exp, dc, ns);
        assertThat((JsonNode) get(ns, n -> n.buckets())).isEqualTo(exp.get("buckets"));
    }

    private void assertServesRecords(String address, JsonNode exp, DirectoryClient dc, NamespaceClient ns) throws Exception {
        assertThat(tree(dc.volumes().join())).isEqualTo(exp.get("volumes"));
        int del = exp.get("deleteVolume").asInt();
        assertThat(tree(dc.deleteLog(del, 0, 100).join())).isEqualTo(exp.get("deleteLog"));
        // The raid lease ran for an hour from when the fixture was written: once run out it is answered without a holder
        // (its record, holder and all, is checked with the default family).
        JsonNode raid = exp.get("raidLease");
        JsonNode lease = JSON.readTree(send(address, "GET", "/v1/raid-lease", null, null).body());
        if (raid.get("expiresMillis").asLong() > System.currentTimeMillis() + 60_000) {
            assertThat(lease).isEqualTo(raid);
        } else {
            assertThat(lease.get("epoch")).isEqualTo(raid.get("epoch"));
        }
        assertThat((JsonNode) get(ns, n -> n.list("compat", null, null, null, 1000))).isEqualTo(exp.get("objects").get("compat"));
        assertThat((JsonNode) get(ns, n -> n.list("zweite", null, null, null, 1000))).isEqualTo(exp.get("objects").get("zweite"));
        assertThat((JsonNode) get(ns, n -> n.object("compat", UNICODE))).isEqualTo(exp.get("unicodeObject"));
        assertThat((JsonNode) get(ns, n -> n.object("compat", "multi/done"))).isEqualTo(exp.get("doneObject"));
        assertThat((JsonNode) get(ns, n -> n.uploads("compat", null, null, null, null, 100))).isEqualTo(exp.get("uploads"));
        String open = exp.get("openUpload").asText();
        assertThat((JsonNode) get(ns, n -> n.parts("compat", "multi/open", open, 0, 100))).isEqualTo(exp.get("parts"));
        assertThat((JsonNode) get(ns, n -> n.pendings(null, 100))).isEqualTo(exp.get("pendings"));
        assertThat(get(ns, n -> n.pending(exp.get("doomed").asText())).get("state").asText()).isEqualTo("DOOMED");
        assertThat(get(ns, n -> n.pending(exp.get("writing").asText())).get("state").asText()).isEqualTo("WRITING");
    }

    /**
     * Changes made by this code over the old data: a bucket, a conditional put with a request id sent
     * twice (the second answered from the record, {@code Hayloft-Repeated: true}), a new store, a key
     * lease (past the old one's keys), a delete-log entry, the old upload completed. Returns the request id.
     */
    private String newChanges(String address, JsonNode exp) throws Exception {
        DirectoryClient dc = new DirectoryClient(http, List.of(address), "admin");
        NamespaceClient ns = new NamespaceClient(dc);
        ns.createBucket("neu", "eu-compat-2").join();
        String id = UUID.randomUUID().toString();
        String body = "{\"object\": {\"bucket\": \"neu\", \"key\": \"" + UNICODE + "\", \"size\": 0, \"etag\": \"e-neu\", \"chunks\": []},"
                + " \"ifNoneMatch\": true}";
        HttpResponse<String> first = send(address, "POST", "/v1/s3/objects/neu/put", id, body);
        assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
        assertThat(first.headers().firstValue("Hayloft-Repeated")).isEmpty();
        HttpResponse<String> again = send(address, "POST", "/v1/s3/objects/neu/put", id, body);
        assertThat(again.statusCode()).as(again.body()).isEqualTo(200);
        assertThat(again.headers().firstValue("Hayloft-Repeated")).contains("true");
        assertThat(JSON.readTree(again.body())).isEqualTo(JSON.readTree(first.body()));

        dc.heartbeat(new Wire.Heartbeat("s5", "127.0.0.1:29005", "r5", 1L << 40, 1L << 40, List.of())).join();
        JsonNode old = exp.get("lease");
        Wire.Lease lease = dc.lease(10, List.of()).join();
        if (lease.volume() == old.get("volume").asInt()) {
            assertThat(lease.first()).as("a new lease's keys are past the old lease's").isGreaterThanOrEqualTo(
                    old.get("first").asLong() + old.get("count").asLong());
        }
        int del = exp.get("deleteVolume").asInt();
        assertThat(dc.logDeletes(del, List.of(new Wire.DeleteEntry(0, 20, "00000000000000f0", 1))).join().head())
                .isEqualTo(exp.get("deleteLog").get("head").asLong() + 1);
        return id;
    }

    /** After a restart: the old records (the delete log with one entry more) and the new changes, request id included. */
    private void assertServesAfterChanges(String address, JsonNode exp, String id) throws Exception {
        DirectoryClient dc = new DirectoryClient(http, List.of(address), "admin");
        NamespaceClient ns = new NamespaceClient(dc);
        ObjectNode log = exp.get("deleteLog").deepCopy();
        log.put("head", log.get("head").asLong() + 1);
        log.withArray("entries").add(tree(new Wire.DeleteEntry(log.get("head").asLong(), 20, "00000000000000f0", 1)));
        ObjectNode changed = exp.deepCopy();
        changed.set("deleteLog", tree(log));
        assertServesRecords(address, changed, dc, ns);

        JsonNode buckets = get(ns, n -> n.buckets());
        assertThat(buckets).hasSize(3);
        assertThat(buckets.get(0)).isEqualTo(exp.get("buckets").get(0));
        assertThat(buckets.get(1).get("name").asText()).isEqualTo("neu");
        assertThat(buckets.get(1).get("objects").asLong()).as("the repeated put counted once").isEqualTo(1);
        assertThat(buckets.get(2)).isEqualTo(exp.get("buckets").get(1));
        assertThat(ns.object("neu", UNICODE).join().etag()).isEqualTo("e-neu");
        JsonNode stores = tree(dc.stores().join());
        assertThat(stores).hasSize(exp.get("stores").size() + 1);
        for (int i = 0; i < exp.get("stores").size(); i++) {
            assertThat(stores.get(i)).isEqualTo(exp.get("stores").get(i));
        }
        String body = "{\"object\": {\"bucket\": \"neu\", \"key\": \"" + UNICODE + "\", \"size\": 0, \"etag\": \"e-neu\", \"chunks\": []},"
                + " \"ifNoneMatch\": true}";
        HttpResponse<String> after = send(address, "POST", "/v1/s3/objects/neu/put", id, body);
        assertThat(after.statusCode()).as(after.body()).isEqualTo(200);
        assertThat(after.headers().firstValue("Hayloft-Repeated")).as("the request id survives the restart").contains("true");
    }

    private static HttpResponse<String> send(String address, String method, String path, String id, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://" + address + path)).header("Authorization", "Bearer admin")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        if (id != null) {
            b.header(DirectoryClient.REQUEST_ID_HEADER, id);
        }
        return RAW.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Unpacks a ustar archive of regular files and directories (what the README's tar command writes). */
    static void untar(InputStream in, Path to) throws IOException {
        byte[] header = new byte[512];
        while (in.readNBytes(header, 0, 512) == 512) {
            if (header[0] == 0) {
                return; // the end: two zero blocks
            }
            String name = field(header, 0, 100);
            String prefix = field(header, 345, 155);
            if (!prefix.isEmpty()) {
                name = prefix + "/" + name;
            }
            long size = Long.parseLong(field(header, 124, 12).trim(), 8);
            char type = (char) header[156];
            Path target = to.resolve(name).normalize();
            if (!target.startsWith(to)) {
                throw new IOException("tar entry outside the target: " + name);
            }
            if (type == '5') {
                Files.createDirectories(target);
            } else if (type == '0' || type == 0) {
                Files.createDirectories(target.getParent());
                Files.write(target, in.readNBytes((int) size));
                long pad = (512 - size % 512) % 512;
                if (in.readNBytes((int) pad).length != pad) {
                    throw new IOException("truncated tar entry " + name);
                }
            } else {
                throw new IOException("tar entry " + name + " has type '" + type + "'; only files and directories are expected");
            }
        }
    }

    private static String field(byte[] h, int offset, int length) {
        int end = offset;
        while (end < offset + length && h[end] != 0) {
            end++;
        }
        return new String(h, offset, end - offset, StandardCharsets.UTF_8);
    }

    private static void delete(Path p) throws IOException {
        try (Stream<Path> s = Files.walk(p)) {
            for (Path q : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(q);
            }
        }
    }

    private static void copy(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> s = Files.list(from)) {
            for (Path f : s.toList()) {
                Files.copy(f, to.resolve(f.getFileName()));
            }
        }
    }
}
