package io.hayloft.cli.client;

import io.hayloft.client.Futures;
import java.util.HashSet;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.hayloft.cli.cluster.ClusterOptions;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PhotoNotFoundException;
import io.hayloft.client.PhotoStat;
import io.hayloft.client.PutResult;
import io.hayloft.client.Upload;
import io.hayloft.format.wire.PhotoId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Put, get, stat and delete through {@link HayloftClient} against a reference model (id → bytes),
 * on one real cluster: photos with alternate keys over the whole unsigned 32-bit range (0, 1, 150,
 * 2^31, 2^32-1 and random ones), sizes from 0 to the client's maximum object size, some deleted;
 * reads and deletes of keys over the whole key range that were never written, and of written keys
 * with a wrong cookie. Whatever the model holds reads back exactly; whatever it does not is a
 * {@link PhotoNotFoundException}; stat lists exactly the model's alternates with their sizes.
 */
class ClientModelPropertyTest {
    private static final int MAX_OBJECT = 4096;
    private static Path dir;
    private static EmbeddedCluster cluster;
    private static HayloftClient client;

    /** One photo of a try: its alternates' sizes, and whether the try deletes it. */
    record Photo(Map<Integer, Integer> sizes, boolean delete) {
    }

    @BeforeContainer
    static void start() throws Exception {
        dir = Files.createTempDirectory("hayloft-client-model");
        cluster = EmbeddedCluster.start(ClusterOptions.of(dir).withTiming(100, 60_000, 2).withFsync(false));
        client = HayloftClient.builder().directory(cluster.directoryAddress()).maxObjectBytes(MAX_OBJECT)
                .connectTimeout(Duration.ofSeconds(1)).requestTimeout(Duration.ofSeconds(5))
                .backoff(Duration.ofMillis(20), Duration.ofMillis(200)).build();
    }

    @AfterContainer
    static void stop() throws IOException {
        if (client != null) {
            client.close();
        }
        if (cluster != null) {
            cluster.close();
        }
        if (dir != null) {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @Provide
    Arbitrary<List<Photo>> photos() {
        Arbitrary<Integer> alt = Arbitraries.oneOf(Arbitraries.of(0, 1, 150, Integer.MIN_VALUE, -1),
                Arbitraries.integers().between(Integer.MIN_VALUE, Integer.MAX_VALUE));
        Arbitrary<Integer> size = Arbitraries.oneOf(Arbitraries.of(0, 1, MAX_OBJECT), Arbitraries.integers().between(0, MAX_OBJECT));
        Arbitrary<Map<Integer, Integer>> sizes = Arbitraries.maps(alt, size).ofMinSize(1).ofMaxSize(4);
        return Combinators.combine(sizes, Arbitraries.of(true, false)).as(Photo::new).list().ofMinSize(1).ofMaxSize(6);
    }

    @Property(tries = 30)
    void whatTheModelHoldsReadsBackAndNothingElseDoes(@ForAll("photos") List<Photo> photos, @ForAll boolean batch,
                                                     @ForAll long seed,
                                                     @ForAll("keys") List<Long> neverWritten) {
        Random random = new Random(seed);
        Map<PhotoId, byte[]> model = new HashMap<>();
        List<Upload> uploads = new ArrayList<>();
        List<Map<Integer, byte[]>> contents = new ArrayList<>();
        for (Photo p : photos) {
            Upload u = Upload.empty();
            Map<Integer, byte[]> c = new HashMap<>();
            for (Map.Entry<Integer, Integer> e : p.sizes().entrySet()) {
                byte[] b = new byte[e.getValue()];
                random.nextBytes(b);
                u = u.alt(e.getKey(), b);
                c.put(e.getKey(), b);
            }
            uploads.add(u);
            contents.add(c);
        }
        List<List<PutResult>> results = new ArrayList<>();
        if (batch) {
            List<PutResult> all = Futures.await(client.putAllUploadsAsync(uploads));
            int i = 0;
            for (Upload u : uploads) {
                int n = contents.get(results.size()).size();
                results.add(all.subList(i, i + n));
                i += n;
            }
        } else {
            for (Upload u : uploads) {
                results.add(client.put(u));
            }
        }
        for (int i = 0; i < photos.size(); i++) {
            for (PutResult r : results.get(i)) {
                byte[] b = contents.get(i).get(r.id().alt());
                assertThat(b).as("result for an alternate that was put: %s", r.id()).isNotNull();
                model.put(r.id(), b);
            }
        }
        // Every alternate reads back; stat lists exactly the photo's alternates and sizes.
        model.forEach((id, b) -> assertThat(client.get(id)).as("get %s", id).isEqualTo(b));
        for (int i = 0; i < photos.size(); i++) {
            PhotoId first = results.get(i).get(0).id();
            Set<PhotoStat.Alt> expected = new HashSet<>();
            contents.get(i).forEach((alt, b) -> expected.add(new PhotoStat.Alt(alt, b.length)));
            assertThat(Set.copyOf(client.stat(first).alts())).as("stat %s", first).isEqualTo(expected);
        }
        // Deletes: the whole photo (every alternate) goes; the others stay.
        for (int i = 0; i < photos.size(); i++) {
            if (photos.get(i).delete()) {
                PhotoId any = results.get(i).get(results.get(i).size() - 1).id();
                PhotoId wrongCookie = new PhotoId(any.volume(), any.key(), any.alt(), ~any.cookie());
                assertThat(catchThrowable(() -> client.delete(wrongCookie))).isInstanceOf(PhotoNotFoundException.class);
                client.delete(any);
                for (PutResult r : results.get(i)) {
                    model.remove(r.id());
                }
            }
        }
        for (int i = 0; i < photos.size(); i++) {
            for (PutResult r : results.get(i)) {
                byte[] b = model.get(r.id());
                if (b == null) {
                    assertThat(catchThrowable(() -> client.get(r.id()))).as("deleted %s", r.id())
                            .isInstanceOf(PhotoNotFoundException.class);
                } else {
                    assertThat(client.get(r.id())).isEqualTo(b);
                }
            }
        }
        // Keys never written, over the whole key range, on a volume that exists: a miss for get, stat and delete.
        int volume = results.get(0).get(0).id().volume();
        for (long key : neverWritten) {
            PhotoId none = new PhotoId(volume, key, random.nextInt(), random.nextLong());
            if (model.keySet().stream().anyMatch(id -> id.key() == key)) {
                continue;
            }
            assertThat(catchThrowable(() -> client.get(none))).isInstanceOf(PhotoNotFoundException.class);
            assertThat(catchThrowable(() -> client.stat(none))).isInstanceOf(PhotoNotFoundException.class);
            assertThat(catchThrowable(() -> client.delete(none))).isInstanceOf(PhotoNotFoundException.class);
        }
    }

    @Provide
    Arbitrary<List<Long>> keys() {
        return Arbitraries.oneOf(Arbitraries.of(0L, 1L, Long.MAX_VALUE, (1L << 32) - 1, 1L << 32),
                Arbitraries.longs().between(0, Long.MAX_VALUE)).list().ofMaxSize(3);
    }
}
