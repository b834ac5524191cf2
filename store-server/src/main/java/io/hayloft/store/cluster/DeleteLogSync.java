package io.hayloft.store.cluster;

import io.hayloft.client.DirectoryClient;
import io.hayloft.client.Futures;
import io.hayloft.format.wire.Wire;
import io.hayloft.store.Store;
import io.hayloft.store.StoreOperationException;
import java.util.Collection;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies the directory's per-volume delete logs to a store's volumes, as a heartbeat answer
 * ({@link Wire.HeartbeatAnswer#deleteHeads()}) asks: for each volume whose head is past what it
 * applied, pages through {@code GET /v1/volumes/{id}/deletes?after=applied}
 * ({@value #PAGE} entries a page) and hands each page to {@link Store#applyDeletes} (deletes
 * durable first, then the applied sequence in the volume's {@code N.dseq}); then the volume is
 * {@linkplain Store#markSynced synced} and serves reads. Used by {@link DirectoryHeartbeat} and by
 * whatever heartbeats for a store (the embedded cluster).
 *
 * <p>Thread-safe as far as {@link Store} is; callers run one sync of a store at a time.
 */
public final class DeleteLogSync {
    private static final Logger LOG = LoggerFactory.getLogger(DeleteLogSync.class);
    /** Entries asked per page of a delete log. */
    public static final int PAGE = 10_000;

    private DeleteLogSync() {
    }

    /**
     * Brings each volume in {@code reported} (the volumes of the heartbeat {@code answer} answers)
     * up to its delete-log head in the answer, then marks it synced; a volume the answer does not
     * name has no log for this store and is marked synced at once. A failure on one volume is
     * logged and leaves it as it was; the others go on. Blocking; callers serialise the syncs of
     * one store.
     */
    public static void sync(Store store, DirectoryClient directoryClient, Wire.HeartbeatAnswer answer,
                            Collection<Long> reported) {
        for (long id : reported) {
            Long head = answer.deleteHeads().get((int) id);
            try {
                if (head != null) {
                    long applied = store.appliedDeletes(id);
                    boolean more = head > applied;
                    while (more) {
                        Wire.DeleteLog page = directoryClient.deleteLog((int) id, applied, PAGE)
                                .get(30, TimeUnit.SECONDS);
                        long upTo = applied;
                        for (Wire.DeleteEntry e : page.entries()) {
                            upTo = Math.max(upTo, e.seq());
                        }
                        int n = store.applyDeletes(id, page.entries(), upTo);
                        if (n > 0) {
                            LOG.info("volume {}: applied its delete log {}..{}: {} needles deleted", id, applied + 1, upTo, n);
                        }
                        more = page.more() && upTo > applied; // no progress: stop rather than spin
                        applied = upTo;
                    }
                }
                store.markSynced(id); // not in the answer: the directory keeps no log of it for this store
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (StoreOperationException e) {
                if (e.reason() != StoreOperationException.Reason.VOLUME_NOT_FOUND) {
                    LOG.warn("volume {}: delete-log sync failed; will retry after the next heartbeat", id, e);
                }
            } catch (Exception e) {
                LOG.warn("volume {}: delete-log sync failed ({}); will retry after the next heartbeat", id,
                        Futures.unwrap(e).toString());
            }
        }
    }
}
