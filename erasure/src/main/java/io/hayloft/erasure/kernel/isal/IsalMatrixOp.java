package io.hayloft.erasure.kernel.isal;

import io.hayloft.erasure.kernel.AbstractMatrixOp;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A matrix prepared by ISA-L: {@code ec_init_tables} once, into native memory, then
 * {@code ec_encode_data} for every {@link #apply}.
 *
 * <p>Buffers: direct buffers go to C by address, without a copy. Heap buffers with an accessible
 * array are pinned with {@code GetPrimitiveArrayCritical} for the duration of one native call; such
 * calls are cut into slices of at most {@value #MAX_PINNED} bytes per buffer so that a pinned
 * array never holds the garbage collector off for long. Read-only heap inputs (no accessible array)
 * are copied into a temporary array first.
 *
 * <p>Inputs whose column is zero in every row are never passed to ISA-L (decode and piggyback
 * matrices have such columns), so they cost nothing; an all-zero matrix never calls native code.
 *
 * <p>Accumulate ({@code out ^= m * in}) encodes 32 KiB tiles into native scratch and XORs them in:
 * on RS(10,4) at 1 MiB that measured faster than one {@code ec_encode_data_update} pass per input
 * (see docs/benchmarks-history.md, "ISA-L native backend").
 *
 * <p>Thread-safe: any number of threads may apply concurrently (they share a read lock).
 * {@link #close()} takes the write lock, so it waits for applies in flight, frees the tables once,
 * and is idempotent; afterwards {@code apply} throws {@link IllegalStateException}. An op that is
 * never closed is freed by a {@link Cleaner} once unreachable (no finalizer).
 */
final class IsalMatrixOp extends AbstractMatrixOp {

    /** Largest slice, in bytes per buffer, of one native call that pins heap arrays. */
    static final int MAX_PINNED = 1 << 20;

    private static final Cleaner CLEANER = Cleaner.create();

    /** The native handle, separate from the op so the Cleaner's action does not keep the op alive. */
    private static final class Tables implements Runnable {
        private long handle;

        Tables(long handle) {
            this.handle = handle;
        }

        @Override
        public synchronized void run() {
            if (handle != 0) { // 0: an all-zero matrix, nothing was allocated
                IsalNative.freeTables(handle);
                handle = 0;
            }
        }
    }

    private final Tables tables;
    private final long handle;
    private final Cleaner.Cleanable cleanable;
    /** The inputs with a non-zero coefficient in some row, in order; the native tables cover only these. */
    private final int[] used;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private boolean closed;

    IsalMatrixOp(byte[][] m) {
        super(m);
        this.used = usedColumns();
        byte[] compact = new byte[rows * used.length];
        for (int i = 0; i < rows; i++) {
            for (int u = 0; u < used.length; u++) {
                compact[i * used.length + u] = matrix[i * cols + used[u]];
            }
        }
        this.handle = used.length == 0 ? 0 : IsalNative.newTables(rows, used.length, compact);
        this.tables = new Tables(handle);
        this.cleanable = CLEANER.register(this, tables);
    }

    private int[] usedColumns() {
        int n = 0;
        int[] idx = new int[cols];
        for (int j = 0; j < cols; j++) {
            for (int i = 0; i < rows; i++) {
                if (matrix[i * cols + j] != 0) {
                    idx[n++] = j;
                    break;
                }
            }
        }
        return Arrays.copyOf(idx, n);
    }

    @Override
    public void apply(ByteBuffer[] in, ByteBuffer[] out, int len) {
        check(in, out, len);
        run(in, out, len, false);
    }

    @Override
    public void applyAccumulate(ByteBuffer[] in, ByteBuffer[] out, int len) {
        check(in, out, len);
        run(in, out, len, true);
    }

    private void run(ByteBuffer[] in, ByteBuffer[] out, int len, boolean accumulate) {
        if (used.length == 0) {
            runAllZero(out, len, accumulate);
            return;
        }
        int k = used.length;
        Object[] bases = new Object[k + rows];
        long[] offs = new long[k + rows];
        boolean pinned = false;
        for (int j = 0; j < k; j++) {
            pinned |= place(in[used[j]], len, bases, offs, j);
        }
        for (int i = 0; i < rows; i++) {
            pinned |= place(out[i], len, bases, offs, k + i); // check() rejected read-only outputs
        }
        lock.readLock().lock();
        try {
            if (closed) {
                throw new IllegalStateException("ISA-L matrix op " + rows + "x" + cols + " is closed");
            }
            if (len == 0) {
                return;
            }
            int slice = pinned ? MAX_PINNED : len;
            for (int done = 0; done < len; done += slice) {
                if (done > 0) {
                    for (int x = 0; x < offs.length; x++) {
                        offs[x] += slice;
                    }
                }
                IsalNative.apply(handle, bases, offs, Math.min(slice, len - done), accumulate);
            }
        } finally {
            lock.readLock().unlock();
            Reference.reachabilityFence(this);
            Reference.reachabilityFence(in);
            Reference.reachabilityFence(out);
        }
    }

    /**
     * Puts buffer {@code b} at {@code bases[i]}/{@code offs[i]} for {@link IsalNative}: a direct
     * buffer by itself (read by address), a heap buffer by its array (flagged {@link IsalNative#HEAP},
     * pinned by the call), a read-only heap buffer by a copy of its {@code len} bytes (so only inputs
     * may be read-only). Returns whether the call will pin an array.
     */
    static boolean place(ByteBuffer b, int len, Object[] bases, long[] offs, int i) {
        if (b.isDirect()) {
            bases[i] = b;
            offs[i] = b.position();
            return false;
        }
        if (b.hasArray()) {
            bases[i] = b.array();
            offs[i] = IsalNative.HEAP | (b.arrayOffset() + b.position());
        } else {
            byte[] copy = new byte[len];
            b.get(b.position(), copy, 0, len);
            bases[i] = copy;
            offs[i] = IsalNative.HEAP;
        }
        return true;
    }

    /** An all-zero matrix: outputs become zero, or stay as they are when accumulating. */
    private void runAllZero(ByteBuffer[] out, int len, boolean accumulate) {
        lock.readLock().lock();
        try {
            if (closed) {
                throw new IllegalStateException("ISA-L matrix op " + rows + "x" + cols + " is closed");
            }
            if (!accumulate) {
                byte[] zeros = new byte[Math.min(len, 64 * 1024)];
                for (ByteBuffer b : out) {
                    for (int done = 0; done < len; done += zeros.length) {
                        b.put(b.position() + done, zeros, 0, Math.min(zeros.length, len - done));
                    }
                }
            }
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Frees the native tables; idempotent; waits for applies in flight on other threads. */
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

    boolean isClosed() {
        lock.readLock().lock();
        try {
            return closed;
        } finally {
            lock.readLock().unlock();
        }
    }
}
