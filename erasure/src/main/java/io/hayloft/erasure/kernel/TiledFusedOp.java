package io.hayloft.erasure.kernel;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * The {@link FusedOp} of the Java backends: each step is a {@link MatrixOp} of the same kernel, and
 * {@link #apply} runs all of them on one tile of {@value #TILE} bytes before the next tile (the
 * Java kernels' own tile, so one step's whole working set stays in the L1/L2 caches). Thread-safe:
 * the views of the caller's buffers are made per call.
 */
final class TiledFusedOp extends AbstractFusedOp {

    static final int TILE = 16 * 1024;

    private final MatrixOp[] ops;

    TiledFusedOp(GfKernel kernel, List<FusedStep> steps) {
        super(steps);
        this.ops = new MatrixOp[this.steps.length];
        try {
            for (int s = 0; s < ops.length; s++) {
                ops[s] = kernel.prepare(this.steps[s].matrix());
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    @Override
    public void apply(ByteBuffer[] buffers, int len) {
        check(buffers, len);
        ByteBuffer[] views = new ByteBuffer[this.buffers];
        int[] start = new int[this.buffers];
        for (int x = 0; x < views.length; x++) {
            views[x] = buffers[x].duplicate();
            start[x] = buffers[x].position();
        }
        ByteBuffer[][] in = new ByteBuffer[steps.length][];
        ByteBuffer[][] out = new ByteBuffer[steps.length][];
        for (int s = 0; s < steps.length; s++) {
            in[s] = pick(views, steps[s].inputs());
            out[s] = pick(views, steps[s].outputs());
        }
        for (int base = 0, n; base < len; base += n) {
            n = Math.min(TILE, len - base);
            for (int x = 0; x < views.length; x++) {
                views[x].position(start[x] + base);
            }
            for (int s = 0; s < steps.length; s++) {
                if (steps[s].accumulate()) {
                    ops[s].applyAccumulate(in[s], out[s], n);
                } else {
                    ops[s].apply(in[s], out[s], n);
                }
            }
        }
    }

    private static ByteBuffer[] pick(ByteBuffer[] views, int[] idx) {
        ByteBuffer[] b = new ByteBuffer[idx.length];
        for (int i = 0; i < idx.length; i++) {
            b[i] = views[idx[i]];
        }
        return b;
    }

    @Override
    public void close() {
        for (MatrixOp op : ops) {
            if (op != null) {
                op.close();
            }
        }
    }
}
