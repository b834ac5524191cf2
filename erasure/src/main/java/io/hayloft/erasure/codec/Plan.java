package io.hayloft.erasure.codec;

import io.hayloft.erasure.kernel.MatrixOp;

/**
 * How to compute some pieces of a stripe from others: read the pieces {@code reads}, apply
 * {@code op} (one row per target, one column per read), get the pieces {@code targets}. A piece is
 * {@code unit * substripes + substripe}. Immutable; the op is shared by every thread using the plan.
 * An {@code ephemeral} plan is not in the codec's cache and is closed after its one use.
 */
record Plan(int[] reads, int[] targets, MatrixOp op, boolean ephemeral) {
}
