package io.hayloft.cli.chaos;

import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.serverkit.io.SimulatedDisk;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The process and disk faults the checker injects into one store of an embedded cluster. The store
 * is down afterwards; the checker starts it again with {@link EmbeddedCluster#startStore(int)}.
 */
interface StoreFaults {

    /** {@code kill -9} of the store: it stops serving and writes nothing more. */
    void crash(EmbeddedCluster cluster, int store) throws Exception;

    /** The store's disk loses power: every byte and name no fsync covered is forgotten, then the store is crashed. */
    void powerCut(EmbeddedCluster cluster, int store) throws Exception;

    /**
     * Cuts the power of the first running store that reaches an fsync after {@code writes} started
     * (a write in flight is lost or torn), or of {@code fallback} if none does within 5 s; then
     * crashes that store.
     *
     * @return the store whose power was cut
     */
    int powerCutDuringWrites(EmbeddedCluster cluster, Runnable writes, int fallback) throws Exception;

    /** The faults of this build. */
    static StoreFaults of(EmbeddedCluster cluster) {
        return new StoreFaults() {
            @Override
            public void crash(EmbeddedCluster c, int store) throws Exception {
                c.crashStore(store);
            }

            @Override
            public int powerCutDuringWrites(EmbeddedCluster c, Runnable writes, int fallback) throws Exception {
                AtomicInteger cut = new AtomicInteger(-1);
                CountDownLatch done = new CountDownLatch(1);
                List<SimulatedDisk> armed = new ArrayList<>();
                for (int i = 0; i < c.storeCount(); i++) {
                    if (c.store(i) != null && c.disk(i) instanceof SimulatedDisk d) {
                        int store = i;
                        armed.add(d);
                        d.beforeForce(p -> {
                            if (cut.compareAndSet(-1, store)) {
                                d.powerCut(); // on the forcing thread: this fsync and what it covers never happen
                                done.countDown();
                            }
                        });
                    }
                }
                try {
                    writes.run();
                    if (!done.await(5, TimeUnit.SECONDS) && cut.compareAndSet(-1, fallback)) {
                        ((SimulatedDisk) c.disk(fallback)).powerCut();
                    }
                } finally {
                    armed.forEach(d -> d.beforeForce(null));
                }
                c.crashStore(cut.get());
                return cut.get();
            }

            @Override
            public void powerCut(EmbeddedCluster c, int store) throws Exception {
                if (!(c.disk(store) instanceof SimulatedDisk disk)) {
                    throw new IllegalStateException("store " + store + " is not on a simulated disk: start the cluster with one");
                }
                disk.powerCut();
                c.crashStore(store);
            }
        };
    }
}
