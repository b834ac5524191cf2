package io.hayloft.erasure.kernel;

import java.nio.ByteBuffer;
import java.util.List;

/** Shared validation and step storage for the {@link FusedOp}s of every backend. */
public abstract class AbstractFusedOp implements FusedOp {

    protected final FusedStep[] steps;
    protected final int buffers;
    /** {@code written[x]}: some step writes buffer x, so it must be writable. */
    private final boolean[] written;

    protected AbstractFusedOp(List<FusedStep> steps) {
        if (steps == null || steps.isEmpty()) {
            throw new IllegalArgumentException("a fused op needs at least one step");
        }
        this.steps = steps.toArray(new FusedStep[0]);
        int max = -1;
        for (FusedStep s : this.steps) {
            if (s == null) {
                throw new IllegalArgumentException("a fused step is null");
            }
            max = Math.max(max, s.maxIndex());
        }
        this.buffers = max + 1;
        this.written = new boolean[buffers];
        for (FusedStep s : this.steps) {
            for (int x : s.outputs()) {
                written[x] = true;
            }
        }
    }

    @Override
    public final int buffers() {
        return buffers;
    }

    /** Fails fast, naming the buffer, when the count, a size or a read-only output is wrong. */
    protected final void check(ByteBuffer[] b, int len) {
        if (len < 0) {
            throw new IllegalArgumentException("len must be >= 0, was " + len);
        }
        if (b == null || b.length != buffers) {
            throw new IllegalArgumentException("expected " + buffers + " buffers, got " + (b == null ? 0 : b.length));
        }
        for (int x = 0; x < buffers; x++) {
            if (b[x] == null || b[x].remaining() < len) {
                throw new IllegalArgumentException("buffer " + x + " has " + (b[x] == null ? "no buffer" : b[x].remaining()
                        + " bytes remaining") + ", needs " + len);
            }
            if (written[x] && b[x].isReadOnly()) {
                throw new IllegalArgumentException("buffer " + x + " is written by the op but read-only");
            }
        }
    }
}
