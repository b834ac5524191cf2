package io.hayloft.cli.cluster;

import io.hayloft.serverkit.config.Ports;
import java.util.Arrays;
import java.util.Objects;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.cache.CacheConfig;
import io.hayloft.cache.CacheServer;
import io.hayloft.cache.CacheUrl;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.serverkit.io.Disk;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.format.wire.WriteToken;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.ThreadPoolRunner;
import io.hayloft.testkit.RawHttp;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A wrong cookie is indistinguishable from a missing photo at every URL of every tier (docs/security.md
 * "Who can read"): on a secured cluster of 4 stores with {@code readPolicy: cache}, one cache node
 * (with a directory, so it serves cold URLs, and {@code admitCold}) and clients that read through it,
 * photos on a hot volume and on an erasure-coded one (alternate keys 0 and 0xFFFFFFFF, and needles
 * at keys 0, 2^63-1, 2^63 and 2^64-1 besides the directory's) are asked for with wrong cookies (the
 * cookie with its lowest or highest bit flipped, 0, all ones) at: each store's needle and key URLs
 * (GET and HEAD), the cache's hot URL naming each store and a dead one, the cache's cold URL, and the
 * client's get and stat. Each answer is compared with the answers at the same URL for keys never
 * written in the same volume (near both ends of the key range), an alternate key the photo lacks
 * and, where a volume is not the volume's own business (the cold URL, the client), a volume that
 * does not exist: status, headers but the date and length, error code and body must be identical
 * once the needle id the request itself names is masked. Three times: nothing read yet (the cold
 * volume's photos still cached from the pushes made while it was hot), every photo read right
 * through the cache (hot and cold entries cached), and after deletes, where the answers for a
 * deleted photo must also be byte for byte what they were for its wrong cookies while it lived.
 *
 * <p>Not thread-safe; JUnit runs its tests one at a time.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WrongCookieEverywhereTest {
    private static final String SECRET = "wrong-cookie-secret-0123456789";
    private static final String ADMIN = "wrong-cookie-admin-0123456789";
    /** Keys at both ends of a photo key's range (0..2^63-1), written straight to the replicas with a minted write token. */
    private static final long[] EDGE_KEYS = {0L, Long.MAX_VALUE - 1, Long.MAX_VALUE};
    /**
     * Never written anywhere (checked): keys near both ends of the range, and above it (2^63, 2^64-1: a
     * store's URL takes any unsigned 64-bit key; the client's ids cannot name them).
     */
    private static final long[] ABSENT_KEYS = {1L, 2L, Long.MAX_VALUE - 3, Long.MAX_VALUE - 2, Long.MIN_VALUE, -2L, -1L};
    private static final int[] ABSENT_VOLUMES = {999_999, Integer.MAX_VALUE};

    @TempDir
    static Path dir;

    private EmbeddedCluster cluster;
    private CacheServer cache;
    private HayloftClient pushing;
    private HayloftClient reading;
    private String deadStore;
    private int hot;
    private int cold;
    private final List<PhotoId> hotPhotos = new ArrayList<>();
    private final List<PhotoId> coldPhotos = new ArrayList<>();
    private final Map<PhotoId, byte[]> bytes = new HashMap<>();

    /**
     * One way of asking for a photo; {@code volumeBlind}: the answer is not the volume's own business, so
     * an unknown volume must look missing too; {@code perKey}: it answers for a key, whatever the
     * alternate (the store's key URL, the client's stat), so a missing alternate is no missing photo.
     */
    private record Url(String name, Ask ask, boolean volumeBlind, boolean perKey) {
        Url(String name, Ask ask, boolean volumeBlind) {
            this(name, ask, volumeBlind, false);
        }
    }

    /** The answer to a request for {@code id}, or null when this URL cannot name it (a key above 2^63-1 for the client). */
    @FunctionalInterface
    private interface Ask {
        Answer ask(Id id) throws Exception;
    }

    /** A needle as a URL names it: any unsigned 64-bit key (a {@link PhotoId} holds keys up to 2^63-1 only). */
    private record Id(int volume, long key, int alt, long cookie) {
        static Id of(PhotoId p) {
            return new Id(p.volume(), p.key(), p.alt(), p.cookie());
        }

        Id withCookie(long c) {
            return new Id(volume, key, alt, c);
        }

        /** The photo id, or null for a key a photo id cannot hold. */
        PhotoId photo() {
            return key < 0 ? null : new PhotoId(volume, key, alt, cookie);
        }

        /** {@code <volume>/<key>/<alt>}, the needle id the servers' messages name. */
        String needle() {
            return volume + "/" + Long.toUnsignedString(key) + "/" + Integer.toUnsignedString(alt);
        }

        @Override
        public String toString() {
            return needle() + "?cookie=" + String.format(Locale.ROOT, "%016x", cookie);
        }
    }

    /** An answer compared across ids ({@code masked}: the request's own id masked, no date or length) and exactly. */
    private record Answer(String masked, String exact) {
    }

    @BeforeAll
    void start() throws Exception {
        int cachePort = Ports.free();
        deadStore = "127.0.0.1:" + Ports.free();
        String cacheAddress = "127.0.0.1:" + cachePort;
        cluster = EmbeddedCluster.start(ClusterOptions.of(dir.resolve("cluster")).withStores(4, 4).withFsync(false)
                .withSecrets(SECRET, ADMIN).withTiming(500, 500, 3), i -> Disk.REAL, c -> {
                    c.readPolicy = "cache";
                    c.cacheNodes = List.of(cacheAddress);
                });
        CacheConfig cc = new CacheConfig();
        cc.host = "127.0.0.1";
        cc.port = cachePort;
        cc.clusterSecret = SECRET;
        cc.directory = cluster.directoryAddress();
        cc.directoryToken = ADMIN;
        cc.admitCold = true;
        cc.workerThreads = 8;
        cache = CacheServer.start(cc.validate());
        pushing = cluster.clientBuilder().cacheNodes(List.of(cacheAddress), List.of()).build();
        reading = cluster.clientBuilder().cacheNodes(List.of(cacheAddress), List.of()).pushToCache(false).build();
        Random r = new Random(24);
        // The cold volume: photos pushed into the cache on put (entries of the hot tier), edge keys, sealed, encoded.
        cold = put(pushing, r, coldPhotos);
        Futures.await(reading.directory().markReadOnly(cold, "wrong cookie test"));
        // The hot volume: photos not pushed, so the first phase finds them uncached.
        hot = put(reading, r, hotPhotos);
        assertThat(hot).isNotEqualTo(cold);
        RaidConfig rc = new RaidConfig();
        rc.directory = cluster.directoryAddress();
        rc.adminToken = ADMIN;
        rc.codec = "rs";
        rc.k = 2;
        rc.r = 1;
        rc.blockSize = 64 << 10;
        rc.spoolDir = dir.toString();
        try (ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            new RaidNode(rc, runner).encode(cold);
        }
    }

    /**
     * Puts four photos (alternates 0 and 0xFFFFFFFF) with {@code client}; the volume of the first is the
     * one kept, with the photos that landed in it and needles at the {@link #EDGE_KEYS} written to
     * every replica of it. Returns the volume.
     */
    private int put(HayloftClient client, Random r, List<PhotoId> into) throws IOException {
        List<PhotoId> all = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            byte[] b = new byte[1 + r.nextInt(3000)];
            r.nextBytes(b);
            PhotoId id = client.put(b, i % 2 == 0 ? 0 : -1).id();
            bytes.put(id, b);
            all.add(id);
        }
        int volume = all.get(0).volume();
        all.stream().filter(id -> id.volume() == volume).forEach(into::add);
        List<String> replicas = client.stat(all.get(0)).replicas();
        WriteToken tokens = new WriteToken(SECRET);
        for (int i = 0; i < EDGE_KEYS.length; i++) {
            PhotoId id = new PhotoId(volume, EDGE_KEYS[i], i % 2 == 0 ? -1 : 0, r.nextLong());
            byte[] b = new byte[i];
            r.nextBytes(b);
            for (String store : replicas) {
                String token = tokens.sign(volume, id.key(), 1, System.currentTimeMillis() + 60_000);
                RawHttp.Response put = send(store, "PUT", url("", id, id.cookie()), WriteToken.HEADER + ": " + token + "\r\n", b);
                assertThat(put.status()).as(put.text()).isEqualTo(201);
            }
            bytes.put(id, b);
            into.add(id);
        }
        return volume;
    }

    @AfterAll
    void stop() throws Exception {
        for (AutoCloseable c : new AutoCloseable[] {reading, pushing, cache, cluster}) {
            if (c != null) {
                c.close();
            }
        }
    }

    @Test
    void aWrongCookieLooksLikeAMissingPhotoAtEveryUrlOfEveryTier() throws Exception {
        long[] counts = new long[2]; // comparisons, differences
        List<String> differences = new ArrayList<>();

        // 1. Nothing read yet: the hot volume's photos uncached, the cold volume's pushed ones cached by the hot tier.
        assertThat(hotPhotos).noneMatch(id -> cache.cache().contains(needle(id)));
        assertThat(cache.cache().contains(needle(coldPhotos.get(0)))).as("pushed on put").isTrue();
        compare("nothing read", List.of(), counts, differences);

        // 2. Every photo read right through the cache: hot entries for the hot volume, cold ones for the coded volume.
        for (PhotoId id : hotPhotos) {
            RawHttp.Response r = get(cache.address(), url("/" + replicaOf(id), id, id.cookie()));
            assertThat(r.status()).as(id + ": " + r.text()).isEqualTo(200);
            assertThat(r.body()).isEqualTo(bytes.get(id));
            assertThat(reading.get(id)).isEqualTo(bytes.get(id));
        }
        for (PhotoId id : coldPhotos) {
            RawHttp.Response r = get(cache.address(), url("/cold", id, id.cookie()));
            assertThat(r.status()).as(id + ": " + r.text()).isEqualTo(200);
            assertThat(r.body()).isEqualTo(bytes.get(id));
            assertThat(reading.get(id)).isEqualTo(bytes.get(id));
        }
        assertThat(hotPhotos).allMatch(id -> cache.cache().contains(needle(id)));
        assertThat(coldPhotos).allMatch(id -> cache.cache().contains(needle(id)));
        Map<String, String> before = new HashMap<>();
        compare("every photo cached", List.of(), counts, differences, before);

        // 3. A photo of each volume deleted: its answers join the missing ones, and equal those of its wrong cookies before.
        List<PhotoId> deleted = List.of(hotPhotos.get(0), coldPhotos.get(0));
        for (PhotoId id : deleted) {
            reading.delete(id);
        }
        Map<String, String> after = new HashMap<>();
        compare("after deletes", deleted, counts, differences, after);
        long exact = 0;
        for (Map.Entry<String, String> e : after.entrySet()) {
            String was = before.get(e.getKey());
            if (was != null) {
                exact++;
                if (!was.equals(e.getValue())) {
                    counts[1]++;
                    differences.add("deleted photo, " + e.getKey() + ": alive " + was + " / deleted " + e.getValue());
                }
            }
        }
        assertThat(exact).as("answers for deleted photos compared byte for byte").isGreaterThan(100);

        System.out.printf(Locale.ROOT, "wrong cookies against missing photos: %d comparisons (%d of them byte for byte), "
                + "%d differences%n", counts[0] + exact, exact, counts[1]);
        assertThat(counts[0]).isGreaterThan(10_000);
        assertThat(differences).as(counts[1] + " differences; wrong cookies told from missing photos").isEmpty();
        assertThat(counts[1]).isZero();
        // The photos not deleted still read back.
        for (PhotoId id : bytes.keySet()) {
            if (!deleted.contains(id)) {
                assertThat(reading.get(id)).as(id.toString()).isEqualTo(bytes.get(id));
            }
        }
    }

    private void compare(String phase, List<PhotoId> deleted, long[] counts, List<String> differences) throws Exception {
        compare(phase, deleted, counts, differences, new HashMap<>());
    }

    /**
     * Every URL of {@link #urls()}, for both volumes: the answers to wrong cookies (and to the right
     * cookie where the URL cannot serve the photo, and to deleted photos) against those for missing
     * photos. Adds each difference; {@code exact} gets the exact answer of each (URL, deleted-or-wrong id).
     */
    private void compare(String phase, List<PhotoId> deleted, long[] counts, List<String> differences,
                         Map<String, String> exact) throws Exception {
        for (int volume : new int[] {hot, cold}) {
            List<PhotoId> photos = volume == hot ? hotPhotos : coldPhotos;
            for (Url u : urls()) {
                boolean client = u.name().startsWith("client");
                Map<Id, Answer> wrong = new LinkedHashMap<>();
                for (PhotoId p : photos) {
                    List<Long> cookies = new ArrayList<>(List.of(p.cookie() ^ 1, p.cookie() ^ Long.MIN_VALUE));
                    if (!client) {
                        cookies.addAll(List.of(0L, -1L));
                    }
                    cookies.removeIf(c -> c == p.cookie());
                    if (deleted.contains(p) || rightCookieCannotServe(u, volume)) {
                        cookies.add(p.cookie());
                    }
                    for (long c : cookies) {
                        Id id = Id.of(p).withCookie(c);
                        Answer a = u.ask().ask(id);
                        wrong.put(id, a);
                        exact.put(u.name() + " " + id, a.exact());
                    }
                }
                Map<Id, Answer> missing = new LinkedHashMap<>();
                long max = photos.stream().mapToLong(PhotoId::key).filter(k -> k > 0 && k < 1L << 40).max().orElse(0);
                List<Long> absent = new ArrayList<>();
                for (long k : ABSENT_KEYS) {
                    absent.add(k);
                }
                absent.add(max + 1);
                absent.add(max + 1_000_000);
                for (long k : absent) {
                    if (photos.stream().anyMatch(p -> p.key() == k)) {
                        continue; // the directory hands out keys from 1: not one to call missing
                    }
                    Id id = new Id(volume, k, 0, 0x0123_4567_89ab_cdefL);
                    missing.put(id, u.ask().ask(id));
                }
                PhotoId first = photos.get(photos.size() - 1);
                // An alternate key the photo lacks.
                for (int alt : u.perKey() ? new int[0] : new int[] {7, first.alt() == 0 ? -1 : 0}) {
                    Id id = new Id(volume, first.key(), alt, first.cookie());
                    missing.put(id, u.ask().ask(id));
                }
                if (u.volumeBlind() && (volume == cold || client)) {
                    for (int v : ABSENT_VOLUMES) {
                        Id id = new Id(v, first.key(), first.alt(), first.cookie());
                        missing.put(id, u.ask().ask(id));
                    }
                }
                missing.values().removeIf(Objects::isNull);
                int shown = 0;
                for (Map.Entry<Id, Answer> w : wrong.entrySet()) {
                    for (Map.Entry<Id, Answer> m : missing.entrySet()) {
                        counts[0]++;
                        if (!w.getValue().masked().equals(m.getValue().masked())) {
                            counts[1]++;
                            if (shown++ < 2) {
                                differences.add(phase + ", volume " + volume + ", " + u.name() + ": " + w.getKey() + " -> "
                                        + w.getValue().masked() + "  but missing " + m.getKey() + " -> " + m.getValue().masked());
                            }
                        }
                    }
                }
            }
        }
    }

    /** Where the right cookie gets no photo either: a cold URL of the hot volume, a store's URL of the coded one (no replica left). */
    private boolean rightCookieCannotServe(Url u, int volume) {
        return volume == hot && u.name().equals("cache cold") || volume == cold && u.name().startsWith("store ");
    }

    /** Every URL of every tier that addresses a needle by key and cookie. */
    private List<Url> urls() {
        List<Url> out = new ArrayList<>();
        for (int i = 0; i < cluster.storeCount(); i++) {
            String store = cluster.storeAddress(i);
            out.add(new Url("store " + i + " GET needle", id -> http(store, "GET", "/" + id, id), false));
            out.add(new Url("cache hot via store " + i, id -> http(cache.address(), "GET", "/" + store + "/" + id, id), false));
        }
        String s0 = cluster.storeAddress(0);
        out.add(new Url("store 0 HEAD needle", id -> http(s0, "HEAD", "/" + id, id), false));
        out.add(new Url("store 0 GET key", id -> http(s0, "GET", keyUrl(id), id), false, true));
        out.add(new Url("store 0 HEAD key", id -> http(s0, "HEAD", keyUrl(id), id), false, true));
        out.add(new Url("cache hot via a dead store", id -> http(cache.address(), "GET", "/" + deadStore + "/" + id, id), false));
        out.add(new Url("cache cold", id -> http(cache.address(), "GET", "/cold/" + id, id), true));
        out.add(new Url("client get", id -> id.photo() == null ? null : thrown(() -> reading.get(id.photo()), id.photo()), true));
        out.add(new Url("client stat", id -> id.photo() == null ? null : thrown(() -> reading.stat(id.photo()), id.photo()), true,
                true));
        return out;
    }

    private static Answer http(String address, String method, String path, Id id) throws IOException {
        RawHttp.Response r = send(address, method, path, "", new byte[0]);
        Map<String, String> h = new TreeMap<>(r.headers());
        h.remove("date");
        String body = r.text();
        String exact = r.status() + " " + h + " " + body;
        if (!method.equals("HEAD")) {
            assertThat(h.get("content-length")).as("length of " + path).isEqualTo(Integer.toString(r.body().length));
        }
        h.remove("content-length"); // the body's length (checked above), which differs by the id it names
        return new Answer(r.status() + " " + h + " " + masked(body, id), exact);
    }

    private static Answer thrown(Runnable call, PhotoId id) {
        String what;
        try {
            call.run();
            what = "no error";
        } catch (RuntimeException e) {
            what = e.getClass().getName() + ": " + e.getMessage();
        }
        return new Answer(what.replace(id.toString(), "{id}"), what);
    }

    /** The text with the needle id (and key) the request named masked. */
    private static String masked(String text, Id id) {
        return text.replace(id.needle(), "{needle}").replace(id.volume() + "/" + Long.toUnsignedString(id.key()), "{key}");
    }

    private String replicaOf(PhotoId id) {
        return reading.stat(id).replicas().get(0);
    }

    private static CacheUrl.NeedleKey needle(PhotoId id) {
        return new CacheUrl.NeedleKey(id.volume(), id.key(), id.alt());
    }

    private static String url(String prefix, PhotoId id, long cookie) {
        return prefix + "/" + id.volume() + "/" + Long.toUnsignedString(id.key()) + "/" + Integer.toUnsignedString(id.alt())
                + "?cookie=" + String.format(Locale.ROOT, "%016x", cookie);
    }

    private static String keyUrl(Id id) {
        return "/" + id.volume() + "/" + Long.toUnsignedString(id.key()) + "?cookie=" + String.format(Locale.ROOT, "%016x", id.cookie());
    }

    private static RawHttp.Response get(String address, String path) throws IOException {
        return send(address, "GET", path, "", new byte[0]);
    }

    private static RawHttp.Response send(String address, String method, String path, String headers, byte[] body)
            throws IOException {
        byte[] head = (method + " " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + headers + "Content-Length: "
                + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] all = Arrays.copyOf(head, head.length + body.length);
        System.arraycopy(body, 0, all, head.length, body.length);
        return RawHttp.exchange(address, all, 10_000);
    }
}
