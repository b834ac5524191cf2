package io.hayloft.erasure.kernel.vector;

import io.hayloft.erasure.gf.Gf256;
import io.hayloft.erasure.kernel.AbstractMatrixOp;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A matrix prepared for the {@link NibbleLoops}: the output rows are split into groups of at most 4
 * (the loops keep one accumulator per row of a group in registers), and each group holds the nibble
 * tables of its inputs, skipping inputs whose coefficients in the group are all 0 and replacing the
 * lookup by AND-and-XOR when they are all 0 or 1.
 *
 * <p>Work is done a tile of {@value #TILE} bytes at a time, so the inputs of a tile are still in cache
 * when the next row group reads them. Direct and read-only buffers are staged through per-thread heap
 * tiles (the Vector API calls that read buffers differ between JDK 17 and later; arrays work on all).
 * The bytes the vector loops leave at the end of a tile are computed with the scalar tables.
 *
 * <p>Immutable after construction and safe for concurrent use; staging arrays are per thread.
 */
final class VectorOp extends AbstractMatrixOp {

    static final int TILE = 16 * 1024;

    private static final ThreadLocal<byte[][]> STAGING = new ThreadLocal<>();

    /** One group of 1 to 4 consecutive output rows starting at {@code row}. */
    private static final class Group {
        final int row;
        final int size;
        final int[] active;
        final byte[] kinds;
        final byte[] tables;

        Group(int row, int size, int[] active, byte[] kinds, byte[] tables) {
            this.row = row;
            this.size = size;
            this.active = active;
            this.kinds = kinds;
            this.tables = tables;
        }
    }

    private final Group[] groups;

    VectorOp(byte[][] m) {
        super(m);
        List<Group> list = new ArrayList<>();
        int row = 0;
        while (row < rows) {
            int left = rows - row;
            int size = Math.min(left, 4);
            list.add(group(row, size));
            row += size;
        }
        this.groups = list.toArray(new Group[0]);
    }

    private Group group(int row, int size) {
        int vl = NibbleLoops.VL;
        int[] active = new int[cols];
        byte[] kinds = new byte[cols];
        int na = 0;
        for (int j = 0; j < cols; j++) {
            boolean any = false;
            boolean mul = false;
            for (int r = 0; r < size; r++) {
                int c = coefficient(row + r, j);
                any |= c != 0;
                mul |= c > 1;
            }
            if (any) {
                kinds[na] = (byte) (mul ? 1 : 0);
                active[na++] = j;
            }
        }
        byte[] tables = new byte[na * size * 2 * vl];
        for (int a = 0; a < na; a++) {
            for (int r = 0; r < size; r++) {
                int c = coefficient(row + r, active[a]);
                int base = (a * size + r) * 2 * vl;
                for (int x = 0; x < vl; x++) {
                    if (kinds[a] != 0) {
                        tables[base + x] = (byte) Gf256.mul(c, x & 15);
                        tables[base + vl + x] = (byte) Gf256.mul(c, (x & 15) << 4);
                    } else {
                        tables[base + x] = (byte) (c == 1 ? -1 : 0);
                    }
                }
            }
        }
        return new Group(row, size, Arrays.copyOf(active, na), Arrays.copyOf(kinds, na), tables);
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

    private static byte[][] staging(int count) {
        byte[][] s = STAGING.get();
        if (s == null || s.length < count) {
            s = new byte[Math.max(count, 32)][TILE];
            STAGING.set(s);
        }
        return s;
    }

    private void run(ByteBuffer[] in, ByteBuffer[] out, int len, boolean accumulate) {
        byte[][] inArr = new byte[cols][];
        int[] inOff = new int[cols];
        byte[][] outArr = new byte[rows][];
        int[] outOff = new int[rows];
        byte[][] stage = null;
        for (int base = 0, n; base < len; base += n) {
            n = Math.min(TILE, len - base); // base + n <= len: no int overflow near 2 GiB
            int staged = 0;
            for (int j = 0; j < cols; j++) {
                ByteBuffer b = in[j];
                if (b.hasArray()) {
                    inArr[j] = b.array();
                    inOff[j] = b.arrayOffset() + b.position() + base;
                } else {
                    if (stage == null) {
                        stage = staging(cols + rows);
                    }
                    byte[] s = stage[staged++];
                    b.get(b.position() + base, s, 0, n);
                    inArr[j] = s;
                    inOff[j] = 0;
                }
            }
            for (int i = 0; i < rows; i++) {
                ByteBuffer b = out[i];
                if (b.hasArray()) {
                    outArr[i] = b.array();
                    outOff[i] = b.arrayOffset() + b.position() + base;
                } else {
                    if (stage == null) {
                        stage = staging(cols + rows);
                    }
                    byte[] s = stage[staged++];
                    if (accumulate) {
                        b.get(b.position() + base, s, 0, n);
                    }
                    outArr[i] = s;
                    outOff[i] = 0;
                }
            }
            for (Group g : groups) {
                int done = loops(g, inArr, inOff, outArr, outOff, n, accumulate);
                if (done < n) {
                    tail(g, inArr, inOff, outArr, outOff, done, n, accumulate);
                }
            }
            for (int i = 0; i < rows; i++) {
                if (!out[i].hasArray()) {
                    out[i].put(out[i].position() + base, outArr[i], 0, n);
                }
            }
        }
    }

    private static int loops(Group g, byte[][] in, int[] inOff, byte[][] out, int[] outOff, int n, boolean acc) {
        int r = g.row;
        switch (g.size) {
            case 4:
                return NibbleLoops.rows4(in, inOff, g.active, g.kinds, g.tables,
                        out[r], outOff[r], out[r + 1], outOff[r + 1], out[r + 2], outOff[r + 2], out[r + 3], outOff[r + 3],
                        n, acc);
            case 3:
                return NibbleLoops.rows3(in, inOff, g.active, g.kinds, g.tables,
                        out[r], outOff[r], out[r + 1], outOff[r + 1], out[r + 2], outOff[r + 2], n, acc);
            case 2:
                return NibbleLoops.rows2(in, inOff, g.active, g.kinds, g.tables,
                        out[r], outOff[r], out[r + 1], outOff[r + 1], n, acc);
            default:
                return NibbleLoops.rows1(in, inOff, g.active, g.kinds, g.tables, out[r], outOff[r], n, acc);
        }
    }

    /** Bytes {@code [from, n)} of the group's rows, with the scalar tables. */
    private void tail(Group g, byte[][] in, int[] inOff, byte[][] out, int[] outOff, int from, int n, boolean acc) {
        for (int r = g.row; r < g.row + g.size; r++) {
            byte[] o = out[r];
            int oo = outOff[r];
            for (int t = from; t < n; t++) {
                int v = acc ? o[oo + t] : 0;
                for (int a = 0; a < g.active.length; a++) {
                    int j = g.active[a];
                    v ^= Gf256.mulTable(matrix[r * cols + j])[in[j][inOff[j] + t] & 0xff];
                }
                o[oo + t] = (byte) v;
            }
        }
    }
}
