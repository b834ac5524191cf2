package io.hayloft.cold;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Arrays;

/**
 * {@link ClusterReads} plus the block writes of docs/store-api.md, as {@link StripeEncoder.BlockWrites}:
 * create, append and delete, and {@link #openBlock} as one streamed {@code PUT /blocks/<name>}
 * ({@link ClusterReads#putBlockStream}), or create and appends when the transport cannot stream. What
 * the raid-node's {@code Cluster} and a store encoding a stripe use to send blocks to other stores.
 *
 * <p>Thread-safe: the process's shared {@link ClusterRpc}; no other state.
 */
public class ClusterBlockWrites extends ClusterReads implements StripeEncoder.BlockWrites {

    public ClusterBlockWrites(String directory, String adminToken, Duration timeout, ClusterRpc rpc) {
        super(directory, adminToken, timeout, rpc);
    }

    /** With the addresses of a directory group's replicas (see {@link ClusterReads#ClusterReads(List, String, Duration, ClusterRpc)}). */
    public ClusterBlockWrites(List<String> directories, String adminToken, Duration timeout, ClusterRpc rpc) {
        super(directories, adminToken, timeout, rpc);
    }

    @Override
    public void createBlock(String store, String name) throws IOException {
        call("POST", store(store, "/blocks/" + name + "?op=create"), null, true);
    }

    @Override
    public void appendBlock(String store, String name, byte[] data, int length) throws IOException {
        call("POST", store(store, "/blocks/" + name + "?op=append"), length == data.length ? data : Arrays.copyOf(data, length),
                true);
    }

    /** Deletes a block; true if it was there. */
    @Override
    public boolean deleteBlock(String store, String name) throws IOException {
        return call("DELETE", store(store, "/blocks/" + name), null, false) != null;
    }

    /** One streamed {@code PUT /blocks/<name>}; create and appends when the transport cannot stream. */
    @Override
    public StripeEncoder.BlockUpload openBlock(String store, String name, long length) throws IOException {
        StripeEncoder.BlockUpload up = putBlockStream(store, name, length);
        return up != null ? up : StripeEncoder.BlockWrites.super.openBlock(store, name, length);
    }
}
