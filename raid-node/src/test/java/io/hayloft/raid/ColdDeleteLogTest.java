package io.hayloft.raid;

import io.hayloft.cold.ClusterReads;
import io.hayloft.cold.ColdReader;
import java.util.stream.IntStream;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.format.wire.Wire;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Cold reads name the volume and decide deletes from the volume's delete log in the directory (real
 * directory, 4 real stores, RS(2, 1) by a real raid-node): a (key, cookie) logged after a reader
 * cached the volume hides every alt of that key at once, for that reader and a fresh one; an entry
 * with another cookie hides nothing; a wrong cookie, a missing alt, an unknown key and an unknown
 * volume all read as null; a hot volume is refused. Keys and alts over their unusual but legal
 * values, sizes from 0; a log longer than one page (10,000 entries) is read page after page.
 */
class ColdDeleteLogTest extends ClusterFixture {

    static final long[] KEYS = {1, 150, 1L << 62, Long.MAX_VALUE, -1L /* 2^64 - 1: not loggable (the log takes keys < 2^63) */};
    static final int[] ALTS = {0, 1, 150, Integer.MIN_VALUE /* 2^31 */, -1 /* 2^32 - 1 */};

    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    /** (key/alt) → bytes written. */
    final Map<String, byte[]> model = new LinkedHashMap<>();
    final Map<Long, Long> cookies = new LinkedHashMap<>();

    @Test
    void theDeleteLogDecidesColdDeletesAtOnceByExactCookie() throws Exception {
        cluster = new TestCluster(dir, 4);
        TestCluster.Leased a = cluster.lease(1);
        int volume = a.volume();
        Random rnd = new Random(7);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream batch = new DataOutputStream(bytes);
        int i = 0;
        for (long key : KEYS) {
            long cookie = rnd.nextLong();
            cookies.put(key, cookie);
            for (int alt : ALTS) {
                byte[] data = new byte[i++ % 4 == 0 ? 0 : rnd.nextInt(5000)];
                rnd.nextBytes(data);
                batch.writeLong(key);
                batch.writeLong(cookie);
                batch.writeInt(alt);
                batch.writeInt(data.length);
                batch.write(data);
                model.put(key + "/" + alt, data);
            }
        }
        for (String replica : a.replicas()) {
            assertThat(cluster.send("POST", "http://" + replica + "/" + volume + "/batch", bytes.toByteArray())).isEqualTo(201);
        }
        cluster.directory.directory().markReadOnly(volume, "test");
        RaidConfig c = cluster.raidConfig("rs", 65536);
        c.k = 2;
        c.r = 1;
        c.indexReplicas = 2;
        runner = new ThreadPoolRunner(2);
        RaidNode raid = new RaidNode(c, runner);
        raid.encode(volume);

        try (ColdReader stale = new ColdReader(raid.cluster())) {
            assertEveryNeedle(stale, volume, List.of());
            // Wrong cookie, missing alt, unknown key, unknown volume: all null, like a missing needle.
            for (long key : KEYS) {
                assertThat(stale.get(volume, key, 0, cookies.get(key) ^ 1)).as("wrong cookie of %s", Long.toUnsignedString(key)).isNull();
                assertThat(stale.get(volume, key, 2, cookies.get(key))).as("missing alt").isNull();
            }
            // A photo's live alternates from the needle index, once one needle proved key and cookie.
            for (long key : KEYS) {
                assertAlts(stale, volume, key);
                assertThat(stale.alts(volume, key, 0, cookies.get(key) ^ 1)).as("alts, wrong cookie").isNull();
                assertThat(stale.alts(volume, key, 2, cookies.get(key))).as("alts, missing alt").isNull();
            }
            assertThat(stale.alts(volume + 1000, 1, 0, cookies.get(1L))).as("alts, unknown volume").isNull();
            assertThat(stale.get(volume, 151, 0, cookies.get(150L))).as("unknown key").isNull();
            assertThat(stale.get(volume, 151, 0)).as("unknown key, no cookie").isNull();
            assertThat(stale.get(volume + 1000, 1, 0, cookies.get(1L))).as("unknown volume").isNull();
            // A volume that is not coded is refused: read its replicas.
            int hot = cluster.lease(1).volume();
            assertThatThrownBy(() -> stale.get(hot, 1, 0, 1L)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("volume " + hot).hasMessageContaining("not erasure-coded; read its replicas");

            // More than one page of the log: 10,500 entries for keys the volume never held, then the
            // real ones: Long.MAX_VALUE with its cookie, 2^62 with another cookie than its needles'.
            List<Wire.DeleteEntry> filler = new ArrayList<>();
            for (int f = 0; f < 10_500; f++) {
                filler.add(new Wire.DeleteEntry(0, 1_000_000L + f, "1", 0));
                if (filler.size() == 1000) {
                    logDeletes(volume, filler);
                    filler.clear();
                }
            }
            logDeletes(volume, filler);
            // (One request each: the keys of one request lie within 2^31 of each other, one token covers them.)
            logDeletes(volume, List.of(new Wire.DeleteEntry(0, Long.MAX_VALUE, hex(cookies.get(Long.MAX_VALUE)), ALTS.length)));
            logDeletes(volume, List.of(new Wire.DeleteEntry(0, 1L << 62, hex(cookies.get(1L << 62) ^ 1), ALTS.length)));

            // Honoured at once by the reader that cached the volume before the delete.
            long pagesBefore = stale.deleteLogReads();
            assertEveryNeedle(stale, volume, List.of(Long.MAX_VALUE));
            assertThat(stale.deleteLogReads() - pagesBefore).as("one delete-log call per read, two pages first")
                    .isEqualTo(KEYS.length * ALTS.length + 1);
            for (int alt : ALTS) {
                assertThat(stale.get(volume, Long.MAX_VALUE, alt)).as("deleted, any cookie asked").isNull();
                // The entry for 2^62 carries another cookie: reading with that cookie is a wrong cookie, still null.
                assertThat(stale.get(volume, 1L << 62, alt, cookies.get(1L << 62) ^ 1)).isNull();
            }
            try (ColdReader fresh = new ColdReader(raid.cluster())) {
                assertEveryNeedle(fresh, volume, List.of(Long.MAX_VALUE));
            }
            for (int alt : ALTS) {
                assertThat(stale.alts(volume, Long.MAX_VALUE, alt, cookies.get(Long.MAX_VALUE))).as("alts of a deleted photo").isNull();
            }
            assertAlts(stale, volume, 1L << 62); // its log entry names another cookie
        }
    }

    /** {@code alts} of {@code key}, asked through each of its alternates, lists every alternate with its size, in unsigned order. */
    private void assertAlts(ColdReader reader, int volume, long key) throws Exception {
        List<String> expected = new ArrayList<>();
        IntStream.of(ALTS).boxed().sorted(Integer::compareUnsigned)
                .forEach(alt -> expected.add(Integer.toUnsignedString(alt) + ":" + model.get(key + "/" + alt).length));
        for (int asked : ALTS) {
            List<String> got = new ArrayList<>();
            for (var e : reader.alts(volume, key, asked, cookies.get(key))) {
                got.add(Integer.toUnsignedString(e.alt()) + ":" + e.dataSize());
            }
            assertThat(got).as("alts of %s asked through %s", Long.toUnsignedString(key), Integer.toUnsignedString(asked))
                    .isEqualTo(expected);
        }
    }

    /** Every needle written reads back with its cookie (and with none), but those of {@code deleted} keys read null. */
    private void assertEveryNeedle(ColdReader reader, int volume, List<Long> deleted) throws Exception {
        for (Map.Entry<String, byte[]> e : model.entrySet()) {
            String[] ka = e.getKey().split("/");
            long key = Long.parseLong(ka[0]);
            int alt = Integer.parseInt(ka[1]);
            byte[] expected = deleted.contains(key) ? null : e.getValue();
            assertThat(reader.get(volume, key, alt, cookies.get(key))).as("needle %s/%s", Long.toUnsignedString(key),
                    Integer.toUnsignedString(alt)).isEqualTo(expected);
        }
    }

    private static String hex(long cookie) {
        return String.format("%016x", cookie);
    }

    private void logDeletes(int volume, List<Wire.DeleteEntry> entries) throws Exception {
        if (entries.isEmpty()) {
            return;
        }
        byte[] body = ClusterReads.JSON.writeValueAsBytes(new Wire.DeleteRequest(entries));
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://" + cluster.directory.address()
                        + "/v1/volumes/" + volume + "/deletes")).timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    }
}
