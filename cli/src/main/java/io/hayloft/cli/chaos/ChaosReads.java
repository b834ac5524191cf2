package io.hayloft.cli.chaos;

import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PhotoNotFoundException;
import io.hayloft.client.store.NotFoundException;
import io.hayloft.format.wire.PhotoId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The checker's reads: every needle of the {@link Model} read back through the real client and
 * compared with what the model allows (exact bytes, deleted, or one of the in-doubt values or
 * absent), and wrong-cookie reads that must look like a missing photo. A wrong answer goes to the
 * schedule's failure handler, which throws.
 *
 * <p>Not thread-safe: one schedule's thread calls it (its full check reads 16 needles at once).
 */
final class ChaosReads {
    private static final Logger LOG = LoggerFactory.getLogger(ChaosReads.class);
    /** How long a needle may stay unreadable (a store that just restarted, a directory coming up). */
    static final Duration READ_DEADLINE = Duration.ofSeconds(30);

    private final HayloftClient client;
    private final ChaosStats stats;
    private final Consumer<String> fail;

    /** @param fail reports a loss; must throw */
    ChaosReads(HayloftClient client, ChaosStats stats, Consumer<String> fail) {
        this.client = client;
        this.stats = stats;
        this.fail = fail;
    }

    /** Reads every needle of the model (in parallel, then the doubtful ones again one by one). */
    void checkAll(Model model) throws Exception {
        stats.fullChecks++;
        List<Model.Needle> all = model.needles();
        Semaphore inFlight = new Semaphore(16);
        List<CompletableFuture<Boolean>> reads = new ArrayList<>(all.size());
        for (Model.Needle n : all) {
            inFlight.acquire();
            CompletableFuture<Boolean> f = client.getAsync(n.id).handle((b, t) -> t == null ? n.matches(b)
                    : n.mayBeAbsent && notFound(t));
            f.whenComplete((x, t) -> inFlight.release());
            reads.add(f);
        }
        for (int i = 0; i < all.size(); i++) {
            stats.readsChecked++;
            if (!Boolean.TRUE.equals(reads.get(i).join())) {
                check(all.get(i)); // again, with retries, reporting what it finds
            }
        }
    }

    /** Reads one needle through the client, retrying errors until a deadline; fails the schedule on a wrong answer. */
    void check(Model.Needle n) throws InterruptedException {
        long deadline = System.nanoTime() + READ_DEADLINE.toNanos();
        int notFounds = 0;
        long pause = 20;
        while (true) {
            stats.readsChecked++;
            Throwable error;
            try {
                byte[] b = client.get(n.id);
                if (n.matches(b)) {
                    return;
                }
                fail.accept("needle " + n.id + " read back " + b.length + " bytes that are none of the expected ("
                        + n.describe() + ")" + (n.deleted() ? ": a deleted photo is readable" : ""));
                return;
            } catch (RuntimeException e) {
                error = Futures.unwrap(e);
            }
            if (notFound(error)) {
                if (n.mayBeAbsent) {
                    return;
                }
                if (++notFounds >= 3) {
                    fail.accept("needle " + n.id + " (" + n.describe() + ") reads as not found: " + error.getMessage());
                }
            }
            if (System.nanoTime() > deadline) {
                fail.accept("needle " + n.id + " (" + n.describe() + ") unreadable for " + READ_DEADLINE.toSeconds() + " s: "
                        + error);
            }
            Thread.sleep(pause); // retry backoff of a read that failed, not a synchronisation
            pause = Math.min(1000, pause * 2);
        }
    }

    /** A read with a wrong cookie must look exactly like a missing photo. */
    void checkWrongCookie(Model.Needle n) {
        PhotoId wrong = new PhotoId(n.id.volume(), n.id.key(), n.id.alt(), n.id.cookie() ^ 0x5a5a5a5aL);
        stats.readsChecked++;
        stats.wrongCookieReads++;
        try {
            byte[] b = client.get(wrong);
            fail.accept("needle " + n.id + " read with a wrong cookie " + wrong.cookieHex() + " returned " + b.length + " bytes");
        } catch (RuntimeException e) {
            Throwable t = Futures.unwrap(e);
            if (!notFound(t)) {
                LOG.info("wrong-cookie read of {} failed with {} (not a not-found; not counted as a loss)", n.id, t.toString());
            }
        }
    }

    static boolean notFound(Throwable t) {
        Throwable x = Futures.unwrap(t);
        return x instanceof PhotoNotFoundException || x instanceof NotFoundException;
    }
}
