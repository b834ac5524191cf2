package io.hayloft.s3;

import io.hayloft.client.Futures;
import io.hayloft.client.NamespaceClient;
import io.hayloft.s3.data.ChunkStore;
import java.time.Clock;
import java.util.concurrent.CompletableFuture;

/**
 * What every operation of the gateway works with: its config, the namespace, the chunk store, the
 * clock and the metrics. Immutable; thread-safe (its parts are).
 *
 * @param owner the owner id shown in listings and ACLs (stable per gateway config)
 */
public record Gateway(S3Config config, NamespaceClient namespace, ChunkStore chunks, Clock clock, S3Metrics metrics,
                      String owner) {

    /** Waits for a cluster call; its failure is rethrown as it was raised (rendered by {@link S3Errors}). */
    public static <T> T await(CompletableFuture<T> f) {
        return Futures.await(f);
    }

    /** Frees a DOOMED record in the background (null: nothing). Never throws. */
    public void free(String doomed) {
        if (doomed == null) {
            return;
        }
        try {
            chunks.free(doomed);
        } catch (RuntimeException e) {
            org.slf4j.LoggerFactory.getLogger(Gateway.class).warn("freeing {} failed; the sweep will", doomed, e);
        }
    }
}
