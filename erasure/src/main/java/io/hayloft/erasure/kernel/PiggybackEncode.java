package io.hayloft.erasure.kernel;

import java.util.ArrayList;
import java.util.List;

/**
 * The shape of a two-substripe piggybacked encode (Hitchhiker's), for backends with a dedicated
 * one-pass loop ({@link GfKernel#preparePiggyback}). Buffers, as in a {@link FusedOp}: {@code a_j = j},
 * {@code b_j = k + j}, {@code Pa_i = 2k + i}, {@code Pb_i = 2k + r + i}, and
 * <pre>
 *   Pb_i = sum_j m[i][j] b_j  +  (i >= 1 ? sum_{j : group[j] = i-1} w_j a_j : 0)
 *   Pa_i = sum_j m[i][j] a_j  +  (coupled and i = 1 ? Pb_1 : 0)
 * </pre>
 * with {@code w_j = m[1][j]} when {@code weighted} (Hitchhiker-nonXOR: the piggyback terms are the
 * terms of {@code Pa_1}'s product, so a loop that computes {@code m[1][j] a_j} once can add it to both)
 * and {@code w_j = 1} otherwise (XOR, XOR+). {@link #steps()} is the same encode as generic
 * {@link FusedStep}s, which every backend can run. Immutable.
 */
public final class PiggybackEncode {

    private final int k;
    private final int r;
    private final byte[][] m;
    private final int[] group;
    private final boolean weighted;
    private final boolean coupled;

    /**
     * @param m        the {@code r x k} RS matrix of both substripes
     * @param group    per data unit, the piggyback group {@code g} ({@code a_j} goes into
     *                 {@code Pb_(g+1)}), or -1 for none; groups must be in {@code 0 .. r-2}
     * @param weighted piggyback weights {@code m[1][j]} (nonXOR) instead of 1
     * @param coupled  {@code Pa_1 += Pb_1}
     * @throws IllegalArgumentException naming the problem when the shapes do not match
     */
    public PiggybackEncode(byte[][] m, int[] group, boolean weighted, boolean coupled) {
        if (m == null || m.length < 2 || group == null || group.length == 0) {
            throw new IllegalArgumentException("a piggybacked encode needs at least 2 parity rows and 1 data unit");
        }
        this.r = m.length;
        this.k = group.length;
        this.m = new byte[r][];
        for (int i = 0; i < r; i++) {
            if (m[i] == null || m[i].length != k) {
                throw new IllegalArgumentException("matrix row " + i + " has " + (m[i] == null ? 0 : m[i].length)
                        + " columns for " + k + " data units");
            }
            this.m[i] = m[i].clone();
        }
        for (int j = 0; j < k; j++) {
            if (group[j] < -1 || group[j] > r - 2) {
                throw new IllegalArgumentException("data unit " + j + " is in piggyback group " + group[j]
                        + ", expected -1 .. " + (r - 2));
            }
        }
        this.group = group.clone();
        this.weighted = weighted;
        this.coupled = coupled;
    }

    public int dataUnits() {
        return k;
    }

    public int parityUnits() {
        return r;
    }

    /** {@code m[i][j]} as an unsigned value. */
    public int coefficient(int i, int j) {
        return m[i][j] & 0xff;
    }

    /** The piggyback group of data unit {@code j}, or -1. */
    public int group(int j) {
        return group[j];
    }

    public boolean weighted() {
        return weighted;
    }

    public boolean coupled() {
        return coupled;
    }

    /** The weight of {@code a_j} in its piggyback (0 when j is in no group). */
    public int weight(int j) {
        return group[j] < 0 ? 0 : weighted ? coefficient(1, j) : 1;
    }

    /**
     * The same encode as generic steps, in this order per tile: {@code Pb = M b}; {@code Pb(g+1) ^=
     * pi_g(a)} for every non-empty group; {@code Pa = M a}; then, when coupled, {@code Pa1 ^= Pb1}.
     */
    public List<FusedStep> steps() {
        int[] a = new int[k];
        int[] b = new int[k];
        int[] pa = new int[r];
        int[] pb = new int[r];
        for (int j = 0; j < k; j++) {
            a[j] = j;
            b[j] = k + j;
        }
        for (int i = 0; i < r; i++) {
            pa[i] = 2 * k + i;
            pb[i] = 2 * k + r + i;
        }
        List<FusedStep> steps = new ArrayList<>();
        steps.add(new FusedStep(m, b, pb, false));
        for (int g = 0; g < r - 1; g++) {
            List<Integer> members = new ArrayList<>();
            for (int j = 0; j < k; j++) {
                if (group[j] == g) {
                    members.add(j);
                }
            }
            if (!members.isEmpty()) {
                byte[] row = new byte[members.size()];
                int[] in = new int[members.size()];
                for (int t = 0; t < row.length; t++) {
                    in[t] = members.get(t);
                    row[t] = (byte) weight(in[t]);
                }
                steps.add(new FusedStep(new byte[][] {row}, in, new int[] {pb[g + 1]}, true));
            }
        }
        steps.add(new FusedStep(m, a, pa, false));
        if (coupled) {
            steps.add(new FusedStep(new byte[][] {{1}}, new int[] {pb[1]}, new int[] {pa[1]}, true));
        }
        return steps;
    }
}
