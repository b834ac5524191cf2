package io.hayloft.erasure.gf;

import java.util.ArrayList;
import java.util.List;

/**
 * Expresses target vectors as GF(2^8) linear combinations of "read" vectors, by incremental Gaussian
 * elimination. The codecs describe every piece of a stripe (each unit's substripe) as a coefficient
 * vector over the data symbols; to rebuild a piece from the pieces that can be read, the solver finds
 * coefficients {@code c} with {@code target = sum_i c[i] * read[i]}.
 *
 * <p>Reads are added one at a time ({@link #add}); {@link #express} answers whether, and how, a target
 * lies in their span. Not thread-safe: one instance per planning call.
 */
public final class SpanSolver {

    private final int dimension;
    private final int maxReads;
    private final List<byte[]> basis = new ArrayList<>();
    private final List<byte[]> combos = new ArrayList<>();
    private final List<Integer> pivots = new ArrayList<>();
    private int reads;

    /**
     * @param dimension length of every vector
     * @param maxReads  the most reads that will be added
     */
    public SpanSolver(int dimension, int maxReads) {
        this.dimension = dimension;
        this.maxReads = maxReads;
    }

    /** Number of reads added so far. */
    public int reads() {
        return reads;
    }

    /** Rank of the reads added so far. */
    public int rank() {
        return basis.size();
    }

    /**
     * Adds the next read (its index is {@link #reads()} before the call).
     *
     * @return whether it raised the rank (a read that does not is useless for any target)
     */
    public boolean add(byte[] vector) {
        if (vector.length != dimension) {
            throw new IllegalArgumentException("vector has " + vector.length + " entries, expected " + dimension);
        }
        if (reads >= maxReads) {
            throw new IllegalStateException("more than " + maxReads + " reads added");
        }
        byte[] v = vector.clone();
        byte[] c = new byte[maxReads];
        c[reads] = 1;
        reads++;
        reduce(v, c);
        int p = firstNonZero(v);
        if (p < 0) {
            return false;
        }
        int inv = Gf256.inv(v[p] & 0xff);
        GfMatrix.scale(v, inv);
        GfMatrix.scale(c, inv);
        basis.add(v);
        combos.add(c);
        pivots.add(p);
        return true;
    }

    /**
     * The coefficients over the reads added so far (length {@link #reads()}) whose combination equals
     * {@code target}, or {@code null} if the target is not in their span.
     */
    public byte[] express(byte[] target) {
        byte[] v = target.clone();
        byte[] c = new byte[maxReads];
        reduce(v, c);
        if (firstNonZero(v) >= 0) {
            return null;
        }
        byte[] out = new byte[reads];
        System.arraycopy(c, 0, out, 0, reads);
        return out;
    }

    private void reduce(byte[] v, byte[] c) {
        for (int b = 0; b < basis.size(); b++) {
            int f = v[pivots.get(b)] & 0xff;
            if (f != 0) {
                GfMatrix.addScaled(v, basis.get(b), f);
                GfMatrix.addScaled(c, combos.get(b), f);
            }
        }
    }

    private static int firstNonZero(byte[] v) {
        for (int i = 0; i < v.length; i++) {
            if (v[i] != 0) {
                return i;
            }
        }
        return -1;
    }
}
