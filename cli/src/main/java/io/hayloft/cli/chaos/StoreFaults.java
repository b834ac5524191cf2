package io.hayloft.cli.chaos;

import io.hayloft.cli.cluster.EmbeddedCluster;

/**
 * The process and disk faults the checker injects into one store of an embedded cluster. The store
 * is down afterwards; the checker starts it again with {@link EmbeddedCluster#startStore(int)}.
 */
interface StoreFaults {

    /** Whether this build can cut a store's power (it needs {@code SimulatedDisk} and {@code StoreServer.crash()}). */
    boolean POWER_CUTS_AVAILABLE = false; // TODO(powerloss): true once the powerloss branch is merged.

    /** {@code kill -9} of the store: it stops serving and writes nothing more. */
    void crash(EmbeddedCluster cluster, int store) throws Exception;

    /** Whether {@link #powerCut} is available (it needs the simulated disk). */
    boolean powerCuts();

    /** The store's disk loses power: every byte and name no fsync covered is forgotten, then the store is crashed. */
    void powerCut(EmbeddedCluster cluster, int store) throws Exception;

    /** The faults of this build. */
    static StoreFaults of(EmbeddedCluster cluster) {
        return new StoreFaults() {
            @Override
            public void crash(EmbeddedCluster c, int store) throws Exception {
                c.crashStore(store);
            }

            @Override
            public boolean powerCuts() {
                return POWER_CUTS_AVAILABLE;
            }

            @Override
            public void powerCut(EmbeddedCluster c, int store) {
                // TODO(powerloss): ((SimulatedDisk) c.disk(store)).powerCut(); c.crashStore(store);
                throw new UnsupportedOperationException("power cuts need io.hayloft.common.io.SimulatedDisk (branch powerloss)");
            }
        };
    }
}
