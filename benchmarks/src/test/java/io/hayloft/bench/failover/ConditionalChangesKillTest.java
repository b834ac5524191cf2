package io.hayloft.bench.failover;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.bench.failover.ConditionalChanges.Op;
import io.hayloft.bench.failover.ConditionalChanges.Outcome;
import io.hayloft.client.NamespaceClient;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.format.s3.Bucket;
import io.hayloft.format.s3.Listing;
import io.hayloft.format.s3.ObjectRecord;
import io.hayloft.format.s3.Upload;
import io.hayloft.format.s3.UploadListing;
import io.hayloft.testkit.Await;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * No change acknowledged and then lost, none applied twice, across leader kills: three directory
 * replicas as separate processes (no stores: zero-byte objects need none), six clients each running
 * a stream of conditional namespace changes with the client's retries ({@link ConditionalChanges}:
 * If-Match chains, If-None-Match: * creates, multipart upload creates, If-Match deletes), the leader
 * killed with SIGKILL twice while they run (each time started again with its same command once a new
 * leader acknowledged changes). The final state, as every replica answers it as leader, is checked
 * against the model of what the clients were answered ({@link ConditionalChangesModel}), and the
 * bucket's counters against its listings.
 *
 * <p>A retry of a change whose first attempt the killed leader committed but never answered must be
 * answered with the first answer (request ids): without them, such a retry of a create is refused as
 * if the key had been someone else's, a retried If-Match put is refused although its version is the
 * key's, and a retried upload create makes a second upload. The test asserts that changes were in
 * flight at each kill and that some of them were acknowledged after an attempt lost with the leader.
 */
class ConditionalChangesKillTest {
    private static final int CLIENTS = 6;

    @TempDir
    Path dir;

    /** One kill: the replica, the wall-clock times just before the SIGKILL and once the process was gone. */
    record Kill(String replica, long beforeMillis, long goneMillis) {
    }

    @Test
    void leaderKillsLoseNoAcknowledgedChangeAndApplyNoneTwice() throws Exception {
        GroupProcesses.Options o = FailoverTesting.options(dir, false);
        o.stores = 0;
        long seed = System.nanoTime();
        List<Kill> kills = new ArrayList<>();
        long t0 = System.nanoTime();
        try (GroupProcesses g = GroupProcesses.start(o)) {
            long started = System.nanoTime();
            NamespaceClient admin = ConditionalChanges.client(g.directoryAddresses(), HttpTransport.Listener.NONE);
            admin.createBucket(ConditionalChanges.BUCKET, null).get();
            ConditionalChanges changes = new ConditionalChanges(g.directoryAddresses(), CLIENTS, seed);
            try {
                changes.start();
                awaitAcks(changes, 100, "changes before the first kill");
                for (int i = 1; i <= 2; i++) {
                    kills.add(killLeader(g, changes, i));
                }
            } finally {
                changes.close();
            }
            g.awaitLeader(FailoverTesting.LONG);
            long stopped = System.nanoTime();

            List<Op> ops = changes.ops();
            String summary = summary(ops, kills, seed);
            assertThat(changes.unexpected()).as("answers no change may get (%s)", summary).isEmpty();

            Map<String, State> states = new LinkedHashMap<>();
            for (GroupProcesses.Node n : g.replicas()) {
                g.transferLeader(n, FailoverTesting.LONG);
                states.put(n.name(), state(admin));
            }
            State first = states.values().iterator().next();
            assertThat(ConditionalChangesModel.check(ops, changes.reads(), first.objects(), first.uploads()))
                    .as("violations of the model (%s)", summary).isEmpty();
            assertThat(first.bucket().objects()).as("the bucket's object count").isEqualTo(first.objects().size());
            assertThat(first.bucket().uploads()).as("the bucket's upload count")
                    .isEqualTo(first.uploads().values().stream().mapToLong(List::size).sum());
            assertThat(first.bucket().bytes()).as("the bucket's bytes (zero-byte objects)").isZero();
            states.forEach((replica, s) -> assertThat(s).as("the state replica %s answers as leader", replica).isEqualTo(first));
            System.out.printf(Locale.ROOT, "ConditionalChangesKillTest: %s; %d objects, %d uploads; group started in %.1f s, "
                    + "changes and kills %.1f s, checks %.1f s%n", summary, first.objects().size(), first.bucket().uploads(),
                    (started - t0) / 1e9, (stopped - started) / 1e9, (System.nanoTime() - stopped) / 1e9);

            long acked = ops.stream().filter(op -> op.outcome() == Outcome.ACKED).count();
            assertThat(acked).as("acknowledged changes (%s)", summary).isGreaterThanOrEqualTo(300);
            for (Kill k : kills) {
                assertThat(ackedAcross(ops, k)).as("changes in flight at the kill of %s, acknowledged after an attempt lost with it (%s)",
                        k.replica(), summary).isPositive();
            }
        }
    }

    /**
     * Kills the leader once every running replica names it and a few changes are acknowledged; waits for a
     * surviving replica to name a new leader and for changes acknowledged after the kill; starts the killed
     * replica again with its same command, and waits until every replica names one leader and more changes
     * are acknowledged.
     */
    private static Kill killLeader(GroupProcesses g, ConditionalChanges changes, int i) throws Exception {
        GroupProcesses.Node leader = g.awaitLeader(FailoverTesting.LONG);
        awaitAcks(changes, 30, "changes acknowledged by " + leader.name() + " before kill " + i);
        long before = System.currentTimeMillis();
        g.kill9(leader);
        long gone = System.currentTimeMillis();
        Await.until("a surviving replica names a new leader after kill " + i, FailoverTesting.LONG, GroupProcesses.ASK_EVERY, () -> {
            for (GroupProcesses.Node n : g.replicas()) {
                String l = n == leader ? null : g.leaderSeenBy(n);
                if (l != null && !l.equals(leader.name())) {
                    return true;
                }
            }
            return false;
        });
        awaitAcks(changes, 50, "changes acknowledged by the new leader after kill " + i);
        g.launch(leader);
        g.awaitLeader(FailoverTesting.LONG);
        awaitAcks(changes, 30, "changes acknowledged once " + leader.name() + " came back after kill " + i);
        return new Kill(leader.name(), before, gone);
    }

    private static void awaitAcks(ConditionalChanges changes, int n, String what) throws InterruptedException {
        long from = changes.acked();
        Await.until(what + " (unexpected answers: " + changes.unexpected() + ")", FailoverTesting.LONG, () -> changes.acked() >= from + n);
    }

    /** The namespace as the leader answers it: the bucket, every object's ETag and every key's upload ids, by key. */
    record State(Bucket bucket, Map<String, String> objects, Map<String, List<String>> uploads) {
    }

    private static State state(NamespaceClient ns) throws Exception {
        String bucket = ConditionalChanges.BUCKET;
        Map<String, String> objects = new TreeMap<>();
        String after = null;
        do {
            Listing page = ns.list(bucket, null, null, after, 1000).get();
            for (ObjectRecord r : page.objects()) {
                if (objects.put(r.key(), r.etag()) != null) {
                    throw new AssertionError("key '" + r.key() + "' listed twice");
                }
            }
            after = page.truncated() ? page.next() : null;
        } while (after != null);
        Map<String, List<String>> uploads = new TreeMap<>();
        String keyMarker = null;
        String idMarker = null;
        while (true) {
            UploadListing page = ns.uploads(bucket, null, null, keyMarker, idMarker, 1000).get();
            for (Upload u : page.uploads()) {
                uploads.computeIfAbsent(u.key(), k -> new ArrayList<>()).add(u.uploadId());
            }
            if (!page.truncated()) {
                break;
            }
            keyMarker = page.nextKey();
            idMarker = page.nextUploadId();
        }
        return new State(ns.bucket(bucket).get(), objects, uploads);
    }

    /** Changes started before the kill and ended after it. */
    private static long inFlight(List<Op> ops, Kill k) {
        return ops.stream().filter(op -> op.startMillis() < k.beforeMillis() && op.endMillis() > k.goneMillis()).count();
    }

    /** Changes in flight at the kill, acknowledged after an attempt of theirs went unanswered: retried past the kill. */
    private static long ackedAcross(List<Op> ops, Kill k) {
        return ops.stream().filter(op -> op.outcome() == Outcome.ACKED && op.lostAttempts() > 0 && op.startMillis() < k.beforeMillis()
                && op.endMillis() > k.goneMillis()).count();
    }

    /**
     * Acknowledged changes answered with the record of a first attempt the killed leader made (a retry
     * answered "Hayloft-Repeated"), as far as the client sees them: an attempt of the call went
     * unanswered and the answer's leader time stamp is before the kill, so the change was made by the
     * killed leader, yet answered after its death by another replica.
     */
    private static long repeatsSeen(List<Op> ops, Kill k) {
        return ops.stream().filter(op -> op.outcome() == Outcome.ACKED && op.lostAttempts() > 0 && op.stamp() > 0
                && op.stamp() < k.beforeMillis() && op.endMillis() > k.goneMillis()).count();
    }

    private static String summary(List<Op> ops, List<Kill> kills, long seed) {
        Map<Outcome, Long> outcomes = new TreeMap<>();
        ops.forEach(op -> outcomes.merge(op.outcome(), 1L, Long::sum));
        StringBuilder s = new StringBuilder().append("seed ").append(seed).append(", changes ").append(outcomes);
        for (Kill k : kills) {
            s.append("; kill of ").append(k.replica()).append(": ").append(inFlight(ops, k)).append(" changes in flight, ")
                    .append(ackedAcross(ops, k)).append(" of them acknowledged after a lost attempt, ").append(repeatsSeen(ops, k))
                    .append(" answered from a record");
        }
        return s.toString();
    }
}
