package io.hayloft.erasure.codec;

import io.hayloft.erasure.ReadRange;
import io.hayloft.erasure.kernel.MatrixOp;
import java.util.ArrayList;
import java.util.List;

/**
 * How to compute some pieces of a stripe from others: read the pieces {@code reads}, apply
 * {@code op} (one row per target, one column per read), get the pieces {@code targets}. A piece is
 * {@code unit * substripes + substripe}. Immutable; the op is shared by every thread using the plan.
 * An {@code ephemeral} plan is not in the codec's cache and is closed after its one use.
 */
record Plan(int[] reads, int[] targets, MatrixOp op, boolean ephemeral) {

    /**
     * The unit byte ranges this plan reads over positions {@code [from, from + length)} of every
     * piece ({@code piece} bytes each), in read order; adjacent ranges of one unit are merged.
     */
    List<ReadRange> ranges(int substripes, long piece, long from, long length) {
        List<ReadRange> ranges = new ArrayList<>();
        for (int p : reads) {
            int unit = p / substripes;
            long off = (p % substripes) * piece + from;
            ReadRange last = ranges.isEmpty() ? null : ranges.get(ranges.size() - 1);
            if (last != null && last.unit() == unit && last.offset() + last.length() == off) {
                ranges.set(ranges.size() - 1, new ReadRange(unit, last.offset(), last.length() + length));
            } else {
                ranges.add(new ReadRange(unit, off, length));
            }
        }
        return ranges;
    }
}
