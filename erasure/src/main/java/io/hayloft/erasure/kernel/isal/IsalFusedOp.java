package io.hayloft.erasure.kernel.isal;

import io.hayloft.erasure.kernel.AbstractFusedOp;
import io.hayloft.erasure.kernel.FusedStep;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A {@link io.hayloft.erasure.kernel.FusedOp} run by ISA-L in one native call per
 * {@link #apply}: the shim walks the buffers a tile of {@value #TILE} bytes at a time and runs every
 * step on that tile ({@code ec_encode_data}, into scratch and XORed in for accumulating steps), so
 * there is one JNI crossing per call instead of one per step and tile, and every step finds its
 * tile in the L2 cache. An accumulating step of one all-ones row (Hitchhiker-XOR piggybacks, the
 * coupling) is a plain multi-source XOR with no tables and no scratch.
 *
 * <p>{@code wiring}, per step: {@code flags} (1 accumulate, 2 plain XOR, 4 zero the outputs),
 * {@code cols}, {@code rows}, the {@code cols} input buffer indices, the {@code rows} output buffer
 * indices. Columns that are zero in every row of a step are dropped, as in {@link IsalMatrixOp}.
 *
 * <p>Buffers are passed as in {@link IsalMatrixOp}; calls that pin heap arrays are cut into slices
 * of at most {@link IsalMatrixOp#MAX_PINNED} bytes. Thread-safe with the same read/write-lock
 * discipline: {@link #close()} waits for calls in flight, frees the tables once and is idempotent;
 * a {@link Cleaner} frees an op that is never closed.
 */
final class IsalFusedOp extends AbstractFusedOp {

    /**
     * Bytes per buffer per tile: the 28 buffers of a Hitchhiker (10,4) chunk take 896 KiB, within a
     * 1 MiB L2; smaller tiles pay ISA-L's fixed cost per call more often (the tile sizes are compared
     * in docs/benchmarks-history.md).
     */
    static final int TILE = 32 * 1024;

    private static final Cleaner CLEANER = Cleaner.create();

    /** The native handles, apart from the op so the Cleaner's action does not keep it alive. */
    private static final class Tables implements Runnable {
        private final long[] handles;

        Tables(long[] handles) {
            this.handles = handles;
        }

        @Override
        public synchronized void run() {
            for (int s = 0; s < handles.length; s++) {
                if (handles[s] != 0) {
                    IsalNative.freeTables(handles[s]);
                    handles[s] = 0;
                }
            }
        }
    }

    private final long[] handles;
    private final int[] wiring;
    private final Tables tables;
    private final Cleaner.Cleanable cleanable;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private boolean closed;

    IsalFusedOp(List<FusedStep> steps) {
        super(steps);
        this.handles = new long[this.steps.length];
        this.tables = new Tables(handles);
        this.cleanable = CLEANER.register(this, tables);
        List<Integer> w = new ArrayList<>();
        try {
            for (int s = 0; s < this.steps.length; s++) {
                wire(s, this.steps[s], w);
            }
        } catch (RuntimeException | Error e) {
            cleanable.clean();
            throw e;
        }
        this.wiring = w.stream().mapToInt(Integer::intValue).toArray();
    }

    private void wire(int s, FusedStep step, List<Integer> w) {
        int[] in = step.inputs();
        int[] out = step.outputs();
        List<Integer> used = new ArrayList<>();
        boolean ones = out.length == 1;
        for (int j = 0; j < in.length; j++) {
            boolean any = false;
            for (int i = 0; i < out.length; i++) {
                int c = step.coefficient(i, j);
                any |= c != 0;
                ones &= c == 1;
            }
            if (any) {
                used.add(j);
            }
        }
        int flags;
        if (used.isEmpty()) {
            flags = step.accumulate() ? 1 | 2 : 4; // adds nothing (a XOR of no sources), or zeroes
        } else if (step.accumulate() && ones) {
            flags = 1 | 2;
        } else {
            flags = step.accumulate() ? 1 : 0;
            byte[] compact = new byte[out.length * used.size()];
            for (int i = 0; i < out.length; i++) {
                for (int u = 0; u < used.size(); u++) {
                    compact[i * used.size() + u] = (byte) step.coefficient(i, used.get(u));
                }
            }
            handles[s] = IsalNative.newTables(out.length, used.size(), compact);
        }
        w.add(flags);
        w.add(used.size());
        w.add(out.length);
        for (int u : used) {
            w.add(in[u]);
        }
        for (int o : out) {
            w.add(o);
        }
    }

    @Override
    public void apply(ByteBuffer[] b, int len) {
        check(b, len);
        Object[] bases = new Object[buffers];
        long[] offs = new long[buffers];
        boolean pinned = false;
        for (int x = 0; x < buffers; x++) {
            pinned |= IsalMatrixOp.place(b[x], len, bases, offs, x);
        }
        lock.readLock().lock();
        try {
            if (closed) {
                throw new IllegalStateException("ISA-L fused op of " + steps.length + " steps is closed");
            }
            int slice = pinned ? IsalMatrixOp.MAX_PINNED : Math.max(len, 1);
            for (int done = 0; done < len; done += slice) {
                if (done > 0) {
                    for (int x = 0; x < offs.length; x++) {
                        offs[x] += slice;
                    }
                }
                IsalNative.applyFused(handles, wiring, bases, offs, Math.min(slice, len - done), TILE);
            }
        } finally {
            lock.readLock().unlock();
            Reference.reachabilityFence(this);
            Reference.reachabilityFence(b);
        }
    }

    /** Frees the native tables; idempotent; waits for calls in flight on other threads. */
    @Override
    public void close() {
        lock.writeLock().lock();
        try {
            if (!closed) {
                closed = true;
                cleanable.clean();
            }
        } finally {
            lock.writeLock().unlock();
        }
    }
}
