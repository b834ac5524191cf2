package io.hayloft.erasure.codec;

import io.hayloft.erasure.CodecKind;
import io.hayloft.erasure.gf.Gf256;
import io.hayloft.erasure.gf.GfMatrix;
import io.hayloft.erasure.kernel.FusedOp;
import io.hayloft.erasure.kernel.GfKernel;
import io.hayloft.erasure.kernel.PiggybackEncode;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Hitchhiker codes (Rashmi et al., SIGCOMM 2014) over the RS layer of {@link ReedSolomon}: the XOR,
 * XOR+ and nonXOR variants, exactly as docs/erasure.md specifies.
 *
 * <p>Every unit of {@code B} bytes (B even) is two substripes by hop-and-couple: {@code a} = bytes
 * {@code [0, B/2)}, {@code b} = {@code [B/2, B)}; byte {@code t} of {@code a} is coupled with byte
 * {@code t} of {@code b}. Substripe {@code a} is plain RS with matrix {@code M}. In {@code b}, parity
 * {@code P(g+1)} carries the piggyback {@code pi_g(a)} of data group {@code S_g} for
 * {@code g = 0..r-2}; {@code P0.b} stays clean.
 *
 * <table>
 * <caption>Variants</caption>
 * <tr><th>variant</th><th>M</th><th>groups</th><th>pi_g(a)</th><th>coupling</th></tr>
 * <tr><td>XOR</td><td>Cauchy</td><td>0..k-1 in r-1 groups</td><td>XOR of a_j</td><td>none</td></tr>
 * <tr><td>XOR+</td><td>Cauchy, column j divided by C[1][j]</td><td>0..k-2 in r-1 groups</td>
 *     <td>XOR of a_j</td><td>P1.a = f1(a) + P1.b</td></tr>
 * <tr><td>nonXOR</td><td>Cauchy</td><td>0..k-2 in r-1 groups</td><td>sum C[1][j] a_j</td>
 *     <td>P1.a = f1(a) + P1.b</td></tr>
 * </table>
 *
 * <p>Groups are consecutive and as equal as possible, smaller groups first: at (10,4) XOR has
 * {0,1,2},{3,4,5},{6,7,8,9} and XOR+/nonXOR {0,1,2},{3,4,5},{6,7,8}. Repairing one lost data unit
 * reads 13 or 14 half-units at (10,4) instead of RS's 20 ({@link #preferredRepairReads}). Thread-safe.
 */
public final class Hitchhiker extends LinearCode {

    private final byte[][] cauchy;
    private final byte[][] m;
    private final boolean coupled;
    private final int[] groupOf;
    private final int[][] groups;
    private final byte[][] vectors;
    /** The whole encode as one fused op over (a_0..a_{k-1}, b_0..b_{k-1}, Pa_0..Pa_{r-1}, Pb_0..Pb_{r-1}). */
    private final FusedOp encoder;

    /**
     * @throws IllegalArgumentException when the kind is not a Hitchhiker code, {@code r < 2}, or a
     *                                  group would be empty (XOR+/nonXOR need {@code k - 1 >= r - 1})
     */
    public Hitchhiker(CodecKind kind, int k, int r, GfKernel kernel, int chunkSize) {
        super(kind, check(kind, k, r), r, 2, kernel, chunkSize);
        this.cauchy = GfMatrix.cauchy(k, r);
        this.coupled = kind != CodecKind.HH_XOR;
        this.m = kind == CodecKind.HH_XOR_PLUS ? scaleColumnsByRow1(cauchy) : GfMatrix.copy(cauchy);
        int grouped = kind == CodecKind.HH_XOR ? k : k - 1;
        this.groups = partition(grouped, r - 1);
        this.groupOf = new int[k];
        Arrays.fill(groupOf, -1);
        for (int g = 0; g < groups.length; g++) {
            for (int j : groups[g]) {
                groupOf[j] = g;
            }
        }
        this.vectors = buildVectors();
        this.encoder = kernel.preparePiggyback(encodeShape());
    }

    /**
     * The encode as one piggybacked op ({@link PiggybackEncode}): {@code Pb = M b}, {@code Pb(g+1) +=
     * pi_g(a)}, {@code Pa = M a}, and, when coupled, {@code Pa1 += Pb1}. Buffer indices: {@code a_j = j},
     * {@code b_j = k + j}, {@code Pa_i = 2k + i}, {@code Pb_i = 2k + r + i} (the order of
     * {@link #encodePieces}). nonXOR's piggyback weights {@code C[1][j]} are row 1 of its matrix.
     */
    private PiggybackEncode encodeShape() {
        return new PiggybackEncode(m, groupOf, kind == CodecKind.HH_NONXOR, coupled);
    }

    private static int check(CodecKind kind, int k, int r) {
        if (kind == null || !kind.isHitchhiker()) {
            throw new IllegalArgumentException("not a Hitchhiker codec: " + kind);
        }
        GfMatrix.checkDimensions(k, r);
        if (r < 2) {
            throw new IllegalArgumentException(kind + " needs r >= 2 parity units, was " + r);
        }
        if (kind != CodecKind.HH_XOR && k - 1 < r - 1) {
            throw new IllegalArgumentException(kind + " needs at least one data unit per piggyback group: k - 1 >= r - 1, was k="
                    + k + ", r=" + r);
        }
        return k;
    }

    /** Splits {@code 0..n-1} into {@code g} consecutive groups, sizes as equal as possible, smaller first. */
    static int[][] partition(int n, int g) {
        int[][] out = new int[g][];
        int base = n / g;
        int extra = n % g;
        int next = 0;
        for (int i = 0; i < g; i++) {
            int size = base + (i >= g - extra ? 1 : 0);
            out[i] = new int[size];
            for (int t = 0; t < size; t++) {
                out[i][t] = next++;
            }
        }
        return out;
    }

    private static byte[][] scaleColumnsByRow1(byte[][] c) {
        byte[][] s = GfMatrix.copy(c);
        for (int j = 0; j < c[0].length; j++) {
            int d = c[1][j] & 0xff;
            for (int i = 0; i < c.length; i++) {
                s[i][j] = (byte) Gf256.div(c[i][j] & 0xff, d);
            }
        }
        return s;
    }

    /** Coefficients of {@code pi_g} over the members of group g, in member order. */
    private byte[] piggybackRow(int g) {
        byte[] row = new byte[groups[g].length];
        for (int t = 0; t < row.length; t++) {
            row[t] = kind == CodecKind.HH_NONXOR ? cauchy[1][groups[g][t]] : 1;
        }
        return row;
    }

    /** Piece vectors over (a_0..a_{k-1}, b_0..b_{k-1}); piece = unit * 2 + substripe. */
    private byte[][] buildVectors() {
        int dim = 2 * k;
        byte[][] v = new byte[2 * (k + r)][];
        for (int j = 0; j < k; j++) {
            v[2 * j] = unitVector(dim, j);
            v[2 * j + 1] = unitVector(dim, k + j);
        }
        for (int i = 0; i < r; i++) {
            byte[] a = new byte[dim];
            byte[] b = new byte[dim];
            for (int j = 0; j < k; j++) {
                a[j] = m[i][j];
                b[k + j] = m[i][j];
            }
            if (i >= 1) {
                int g = i - 1;
                byte[] row = piggybackRow(g);
                for (int t = 0; t < row.length; t++) {
                    b[groups[g][t]] ^= row[t];
                }
            }
            if (coupled && i == 1) {
                for (int x = 0; x < dim; x++) {
                    a[x] ^= b[x];
                }
            }
            v[2 * (k + i)] = a;
            v[2 * (k + i) + 1] = b;
        }
        return v;
    }

    /** The data groups {@code S_0..S_(r-2)} (copies). */
    public int[][] groups() {
        int[][] c = new int[groups.length][];
        for (int g = 0; g < groups.length; g++) {
            c[g] = groups[g].clone();
        }
        return c;
    }

    @Override
    protected byte[] pieceVector(int piece) {
        return vectors[piece].clone();
    }

    /**
     * The paper's repair of one data unit {@code x}: {@code b_j} of the other data units and
     * {@code P0.b} give {@code b_x}; then {@code P(g+1).b} and {@code a_j} of the other members of
     * x's group give {@code a_x}; an ungrouped x (XOR+/nonXOR) uses {@code P1.a} and
     * {@code P(g+1).b} for {@code g = 1..r-2}. Parity units have no reduced repair.
     */
    @Override
    protected int[] preferredRepairReads(int x) {
        if (x >= k) {
            return null;
        }
        List<Integer> reads = new ArrayList<>();
        for (int j = 0; j < k; j++) {
            if (j != x) {
                reads.add(2 * j + 1);
            }
        }
        reads.add(2 * k + 1);
        int g = groupOf[x];
        if (g >= 0) {
            reads.add(2 * (k + g + 1) + 1);
            for (int j : groups[g]) {
                if (j != x) {
                    reads.add(2 * j);
                }
            }
        } else {
            reads.add(2 * (k + 1));
            for (int h = 1; h <= r - 2; h++) {
                reads.add(2 * (k + h + 1) + 1);
            }
        }
        return reads.stream().mapToInt(Integer::intValue).toArray();
    }

    /**
     * One fused pass ({@link #encodeShape}): each tile of the {@code 2k} input pieces is read from
     * memory once, and every parity piece of that tile, piggybacks and coupling included, is
     * finished while it is in cache.
     */
    @Override
    protected void encodePieces(ByteBuffer[] data, ByteBuffer[] parity, int len) {
        ByteBuffer[] all = new ByteBuffer[2 * k + 2 * r];
        System.arraycopy(data, 0, all, 0, 2 * k);
        System.arraycopy(parity, 0, all, 2 * k, 2 * r);
        encoder.apply(all, len);
    }

    @Override
    public void close() {
        super.close();
        encoder.close();
    }
}
