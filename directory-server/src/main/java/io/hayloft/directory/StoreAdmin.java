package io.hayloft.directory;

import java.util.concurrent.CompletableFuture;

/** What the directory asks of store servers. Implementations are thread-safe and never block the caller. */
public interface StoreAdmin {

    /** Creates physical volume {@code volume} on the store at {@code address}. */
    CompletableFuture<Void> createVolume(String address, int volume);

    /**
     * The health checker's probe: the store answers {@code /health} and a real disk read of one of
     * its volumes ({@code volume > 0}; 0 when it holds none yet). Completes exceptionally with the
     * reason on failure.
     */
    CompletableFuture<Void> probe(String address, int volume);
}
