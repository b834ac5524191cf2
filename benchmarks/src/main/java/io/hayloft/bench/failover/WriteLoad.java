package io.hayloft.bench.failover;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PartialFailureException;
import io.hayloft.client.PutResult;
import io.hayloft.client.RemoteException;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.format.wire.Wire;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Writes to a replicated directory's cluster while its leader is killed or cut off, and keeps what
 * is needed to prove nothing went wrong:
 * <ul>
 * <li>{@code writers} threads of single puts and small batches (2..5 photos) through one
 * {@link HayloftClient} given every replica ({@code .directory(a, b, c)}); every acknowledged photo's
 * SHA-256 goes into a reference model, and {@link #verify} reads each one back.</li>
 * <li>A probe: one thread of puts, one after the other, through a second client whose every put needs
 * the directory: {@code leaseKeys(1)} (each put takes a lease of one key, {@code POST /v1/leases}) and
 * {@code coalescePuts(0)} (no put shares another's write). Its start and acknowledgement times give
 * the write gap after a kill ({@link #writeGapNanos}).</li>
 * <li>A lease collector: a lease of 10 keys every 100 ms through the writers' {@code DirectoryClient};
 * its ranges and the keys of every put (acknowledged or not) must never overlap.</li>
 * <li>Two raid-lease contenders ({@code POST /v1/raid-lease}, ttl 2 s, holding for a random while,
 * then letting it lapse or releasing it): no two grants to different holders may overlap in time (a
 * grant lasts from the directory's time of granting to its expiry, or to the moment its holder asked to
 * release it), and no epoch goes to two holders. The servers share this machine's clock.</li>
 * </ul>
 *
 * <p>Thread-safe: the records are concurrent collections; start once, stop once.
 */
public final class WriteLoad implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long RAID_TTL_MILLIS = 2000;

    /** One probe put: when it started and ended ({@link System#nanoTime()}), and whether it was acknowledged. */
    public record ProbePut(long startNanos, long endNanos, boolean ok) {
    }

    /** One raid lease grant seen by a contender. */
    record RaidGrant(String holder, long epoch, long fromMillis, long expiresMillis) {
    }

    /** A release a contender asked for (from then on its lease may have ended). */
    record RaidRelease(String holder, long atMillis) {
    }

    /** What {@link #verify} found. */
    public record Verdict(long acknowledged, long readBack, long mismatches, long missing, long keysChecked,
                          long duplicateKeys, long leaseRanges, long raidGrants, long raidOverlaps, List<String> problems) {
        public boolean ok() {
            return problems.isEmpty();
        }
    }

    private final List<String> directories;
    private final int writers;
    private final long writerPauseMillis;
    private final HayloftClient client;
    private final HayloftClient probe;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    private final Map<PhotoId, byte[]> model = new ConcurrentHashMap<>();
    private final Map<Long, String> keys = new ConcurrentHashMap<>(); // key -> who got it
    private final ConcurrentLinkedQueue<long[]> leaseRanges = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<ProbePut> probes = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<RaidGrant> raidGrants = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<RaidRelease> raidReleases = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<String> duplicates = new ConcurrentLinkedQueue<>();
    private final AtomicLong writerFailures = new AtomicLong();
    private final AtomicLong probeFailures = new AtomicLong();
    private final AtomicLong probeAcks = new AtomicLong();
    private final AtomicReference<String> lastFailure = new AtomicReference<>();
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean running;

    /**
     * @param directories every replica's HTTP address
     * @param writers writer threads
     * @param writerPauseMillis pause of each writer between its puts (0: none)
     * @param probeBackoff the probe client's retry backoff (initial, max), e.g. 50 ms and 1 s (the client's default)
     */
    public WriteLoad(List<String> directories, int writers, long writerPauseMillis, Duration[] probeBackoff) {
        this.directories = List.copyOf(directories);
        this.writers = writers;
        this.writerPauseMillis = writerPauseMillis;
        this.client = HayloftClient.builder().directories(directories).requestTimeout(Duration.ofSeconds(5)).build();
        this.probe = HayloftClient.builder().directories(directories).leaseKeys(1).coalescePuts(0)
                .requestTimeout(Duration.ofSeconds(5)).backoff(probeBackoff[0], probeBackoff[1]).listener(trace).build();
    }

    /** Starts every thread. */
    public void start() {
        running = true;
        for (int i = 0; i < writers; i++) {
            int n = i;
            threads.add(thread("writer-" + n, () -> writer(n)));
        }
        threads.add(thread("probe", this::probe));
        threads.add(thread("lease-collector", this::leaseCollector));
        threads.add(thread("raid-a", () -> raidContender("bench-raid-a")));
        threads.add(thread("raid-b", () -> raidContender("bench-raid-b")));
        threads.forEach(Thread::start);
    }

    private static Thread thread(String name, Runnable r) {
        Thread t = new Thread(r, "failover-" + name);
        t.setDaemon(true);
        return t;
    }

    /** Stops every thread and waits for it. */
    public void stop() throws InterruptedException {
        running = false;
        for (Thread t : threads) {
            t.join(30_000);
        }
    }

    private static byte[] photo() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        int size = r.nextInt(10) == 0 ? r.nextInt(2) : 1 + r.nextInt(8192); // sizes 0 and 1 now and then
        byte[] b = new byte[size];
        r.nextBytes(b);
        return b;
    }

    static byte[] sha256(byte[] b) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(b);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private void key(long key, String who) {
        String before = keys.putIfAbsent(key, who);
        if (before != null) {
            duplicates.add("key " + key + " handed out to " + before + " and to " + who);
        }
    }

    private void acked(PutResult r, byte[] data, String who) {
        key(r.id().key(), who);
        model.put(r.id(), sha256(data));
    }

    private void writer(int n) {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        while (running) {
            try {
                if (r.nextInt(4) == 0) {
                    List<byte[]> batch = new ArrayList<>();
                    for (int i = 2 + r.nextInt(4); i > 0; i--) {
                        batch.add(photo());
                    }
                    List<PutResult> out = client.putAll(batch);
                    for (int i = 0; i < out.size(); i++) {
                        acked(out.get(i), batch.get(i), "writer-" + n);
                    }
                } else {
                    byte[] b = photo();
                    acked(client.put(b), b, "writer-" + n);
                }
            } catch (RuntimeException e) {
                failed(e, "writer-" + n);
                writerFailures.incrementAndGet();
            }
            pause(writerPauseMillis);
        }
    }

    private void failed(RuntimeException e, String who) {
        lastFailure.set(who + ": " + e);
        Throwable t = e;
        while (t != null) {
            if (t instanceof PartialFailureException p && "put".equals(p.operation())) {
                p.ids().forEach(id -> key(id.key(), who + " (unacknowledged)"));
                return;
            }
            t = t.getCause();
        }
    }

    private void probe() {
        while (running) {
            long start = System.nanoTime();
            byte[] b = photo();
            try {
                PutResult r = probe.put(b);
                acked(r, b, "probe");
                probes.add(new ProbePut(start, System.nanoTime(), true));
                probeAcks.incrementAndGet();
            } catch (RuntimeException e) {
                failed(e, "probe");
                probes.add(new ProbePut(start, System.nanoTime(), false));
                probeFailures.incrementAndGet();
            }
        }
    }

    private void leaseCollector() {
        while (running) {
            try {
                Wire.Lease l = client.directory().lease(10, List.of()).join();
                leaseRanges.add(new long[] {l.first(), l.count()});
            } catch (RuntimeException e) {
                // no leader for now: the next try
            }
            pause(100);
        }
    }

    private void raidContender(String holder) {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        while (running) {
            long holdUntil = System.currentTimeMillis() + r.nextLong(4000);
            while (running && System.currentTimeMillis() < holdUntil) {
                if (!acquireRaid(holder)) {
                    break;
                }
                pause(500);
            }
            if (r.nextBoolean()) {
                // Whatever the answer (or none), the lease may end from now on: the check counts it ended here.
                raidReleases.add(new RaidRelease(holder, System.currentTimeMillis()));
                leaderCall("DELETE", "/v1/raid-lease?holder=" + holder, null);
            }
            pause(500 + r.nextLong(1500));
        }
    }

    private boolean acquireRaid(String holder) {
        HttpResponse<String> a = leaderCall("POST", "/v1/raid-lease", "{\"holder\":\"" + holder + "\",\"ttlMillis\":" + RAID_TTL_MILLIS + "}");
        if (a == null || a.statusCode() != 200) {
            return false;
        }
        try {
            JsonNode n = JSON.readTree(a.body());
            long expires = n.path("expiresMillis").asLong();
            raidGrants.add(new RaidGrant(n.path("holder").asText(), n.path("epoch").asLong(), expires - RAID_TTL_MILLIS, expires));
            return holder.equals(n.path("holder").asText());
        } catch (IOException e) {
            return false;
        }
    }

    /** A call to whichever replica leads: each address in turn, following a 421's leader; null when none answered but 421/503. */
    private HttpResponse<String> leaderCall(String method, String path, String body) {
        List<String> order = new ArrayList<>(directories);
        for (int hop = 0; hop < order.size() + 3 && !order.isEmpty(); hop++) {
            String address = order.remove(0);
            try {
                HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://" + address + path)).timeout(Duration.ofSeconds(3));
                b = body == null ? b.method(method, HttpRequest.BodyPublishers.noBody())
                        : b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body));
                HttpResponse<String> resp = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
                if (resp.statusCode() == 421) {
                    resp.headers().firstValue("X-Hayloft-Leader").ifPresent(l -> order.add(0, l));
                    continue;
                }
                if (resp.statusCode() == 503) {
                    continue;
                }
                return resp;
            } catch (IOException e) {
                // the next address
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
        }
        return null;
    }

    private void pause(long millis) {
        if (millis <= 0) {
            return;
        }
        try {
            Thread.sleep(millis); // pacing of a load generator, not synchronisation
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
        }
    }

    // ------------------------------------------------------------------ figures

    /** Probe puts acknowledged so far. */
    public long probeAcks() {
        return probeAcks.get();
    }

    public long probeFailures() {
        return probeFailures.get();
    }

    public long writerFailures() {
        return writerFailures.get();
    }

    public long acknowledged() {
        return model.size();
    }

    /** The last failure a writer or the probe saw (for the log), or null. */
    public String lastFailure() {
        return lastFailure.get();
    }

    /**
     * From {@code fromNanos} to the acknowledgement of the first probe put started at or after it
     * (the first one acknowledged, when earlier ones failed), or -1 when none is acknowledged yet.
     */
    public long writeGapNanos(long fromNanos) {
        ProbePut first = null;
        for (ProbePut p : probes) {
            if (p.ok() && p.startNanos() - fromNanos >= 0 && (first == null || p.startNanos() - first.startNanos() < 0)) {
                first = p;
            }
        }
        return first == null ? -1 : first.endNanos() - fromNanos;
    }

    /**
     * The probe client's attempts that ended in [{@code fromNanos}, {@code toNanos}], one line each: the
     * time from {@code fromNanos}, the server, the method, the status (or the failure) and the attempt's
     * own time; and its retries with their backoff. Where a write gap goes.
     */
    public List<String> probeTrace(long fromNanos, long toNanos) {
        List<String> out = new ArrayList<>();
        for (Trace.Event e : trace.events) {
            if (e.nanos() - fromNanos >= 0 && toNanos - e.nanos() >= 0) {
                out.add(String.format(Locale.ROOT, "%+7.0f ms %s", (e.nanos() - fromNanos) / 1e6, e.text()));
            }
        }
        return out;
    }

    /** The probe's attempts and retries, kept for {@link #probeTrace}: about the last 4,096. */
    private static final class Trace implements HttpTransport.Listener {
        record Event(long nanos, String text) {
        }

        final ConcurrentLinkedQueue<Event> events = new ConcurrentLinkedQueue<>();
        private final AtomicLong size = new AtomicLong();

        private void add(String text) {
            events.add(new Event(System.nanoTime(), text));
            if (size.incrementAndGet() > 4096 && events.poll() != null) {
                size.decrementAndGet();
            }
        }

        @Override
        public void onRequest(String target, String method, int status, RemoteException failure, long nanos) {
            add(String.format(Locale.ROOT, "%s %s -> %s (%.0f ms)", method, target,
                    failure == null ? Integer.toString(status) : status + " " + failure.getMessage(), nanos / 1e6));
        }

        @Override
        public void onRetry(String target, String method, int attempt, Duration backoff) {
            add(String.format(Locale.ROOT, "retry %d %s %s after %d ms", attempt, method, target, backoff.toMillis()));
        }
    }

    private final Trace trace = new Trace();

    /** Probe puts started at or after {@code fromNanos} that failed. */
    public long probeFailuresSince(long fromNanos) {
        return probes.stream().filter(p -> !p.ok() && p.startNanos() - fromNanos >= 0).count();
    }

    // ------------------------------------------------------------------ the checks

    /** Reads every acknowledged photo back (byte-exact, by SHA-256) and checks the keys and the raid lease grants. */
    public Verdict verify() throws InterruptedException {
        List<String> problems = new ArrayList<>(duplicates);
        AtomicLong read = new AtomicLong();
        AtomicLong mismatches = new AtomicLong();
        AtomicLong missing = new AtomicLong();
        Semaphore inFlight = new Semaphore(32);
        try (HayloftClient reader = HayloftClient.builder().directories(directories).build()) {
            for (Map.Entry<PhotoId, byte[]> e : model.entrySet()) {
                inFlight.acquire();
                CompletableFuture<byte[]> f = reader.getAsync(e.getKey());
                f.whenComplete((b, t) -> {
                    // The permit goes back only once the photo is counted, so that the acquire(32) below
                    // returns after every count (it once read 979 of 980 read back, the last still counting).
                    try {
                        if (t != null) {
                            missing.incrementAndGet();
                            synchronized (problems) {
                                if (problems.size() < 50) {
                                    problems.add("photo " + e.getKey() + " acknowledged but not read back: " + t);
                                }
                            }
                        } else if (!Arrays.equals(sha256(b), e.getValue())) {
                            mismatches.incrementAndGet();
                            synchronized (problems) {
                                problems.add("photo " + e.getKey() + " read back with other bytes (" + b.length + " bytes)");
                            }
                        } else {
                            read.incrementAndGet();
                        }
                    } finally {
                        inFlight.release();
                    }
                });
            }
            inFlight.acquire(32);
        }
        // Lease ranges: disjoint from each other and from every key a put got.
        TreeMap<Long, Long> ranges = new TreeMap<>();
        long keysChecked = keys.size();
        for (long[] r : leaseRanges) {
            keysChecked += r[1];
            Map.Entry<Long, Long> below = ranges.floorEntry(r[0] + r[1] - 1);
            if (below != null && below.getKey() + below.getValue() > r[0]) {
                problems.add("lease [" + r[0] + ", +" + r[1] + ") overlaps lease [" + below.getKey() + ", +" + below.getValue() + ")");
            }
            ranges.put(r[0], r[1]);
        }
        for (Long k : keys.keySet()) {
            Map.Entry<Long, Long> below = ranges.floorEntry(k);
            if (below != null && below.getKey() + below.getValue() > k) {
                problems.add("key " + k + " of a put (" + keys.get(k) + ") is in the collector's lease [" + below.getKey() + ", +"
                        + below.getValue() + ")");
            }
        }
        long overlaps = raidOverlaps(problems);
        return new Verdict(model.size(), read.get(), mismatches.get(), missing.get(), keysChecked, duplicates.size(),
                leaseRanges.size(), raidGrants.size(), overlaps, List.copyOf(problems));
    }

    /** Grants to different holders whose times overlap, or a new holder without a higher epoch. */
    private long raidOverlaps(List<String> problems) {
        List<RaidGrant> grants = new ArrayList<>();
        for (RaidGrant g : raidGrants) { // a grant ends at its expiry or at the first release its holder asked for after it
            long end = g.expiresMillis();
            for (RaidRelease rel : raidReleases) {
                if (rel.holder().equals(g.holder()) && rel.atMillis() >= g.fromMillis()) {
                    end = Math.min(end, rel.atMillis());
                }
            }
            grants.add(new RaidGrant(g.holder(), g.epoch(), g.fromMillis(), end));
        }
        grants.sort(Comparator.comparingLong(RaidGrant::fromMillis));
        long overlaps = 0;
        for (int i = 0; i < grants.size(); i++) {
            for (int j = i + 1; j < grants.size() && grants.get(j).fromMillis() < grants.get(i).expiresMillis(); j++) {
                RaidGrant a = grants.get(i);
                RaidGrant b = grants.get(j);
                if (!a.holder().equals(b.holder())) {
                    overlaps++;
                    problems.add("two raid lease holders at once: " + a + " and " + b);
                }
            }
        }
        Map<Long, String> byEpoch = new TreeMap<>();
        for (RaidGrant g : grants) {
            String h = byEpoch.putIfAbsent(g.epoch(), g.holder());
            if (h != null && !h.equals(g.holder())) {
                overlaps++;
                problems.add("raid lease epoch " + g.epoch() + " granted to " + h + " and to " + g.holder());
            }
        }
        return overlaps;
    }

    @Override
    public void close() {
        running = false;
        client.close();
        probe.close();
    }

    /** The probe puts recorded (tests). */
    List<ProbePut> probePuts() {
        return List.copyOf(probes);
    }
}
