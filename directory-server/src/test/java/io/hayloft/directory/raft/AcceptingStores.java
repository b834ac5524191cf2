package io.hayloft.directory.raft;

import io.hayloft.directory.StoreAdmin;
import java.util.concurrent.CompletableFuture;

/** Stores that accept every volume creation and answer every probe: the replica tests that need no store process. */
final class AcceptingStores implements StoreAdmin {
    static final StoreAdmin INSTANCE = new AcceptingStores();

    private AcceptingStores() {
    }

    @Override
    public CompletableFuture<Void> createVolume(String address, int volume) {
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletableFuture<Void> probe(String address, int volume) {
        return CompletableFuture.completedFuture(null);
    }
}
