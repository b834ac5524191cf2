package io.hayloft.erasure.kernel;

import io.hayloft.erasure.gf.Gf256;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The pure-Java table-lookup backend: always available, no JVM flags, the reference the other
 * backends are tested against. Works a tile at a time so the inputs of one tile stay in cache while
 * every output row is computed; coefficients 0 and 1 are skipped and XORed. Direct buffers are
 * staged through a per-thread heap tile. Thread-safe.
 */
public final class ScalarKernel implements GfKernel {

    static final int TILE = 16 * 1024;

    public static final ScalarKernel INSTANCE = new ScalarKernel();

    private static final ThreadLocal<byte[][]> STAGING = new ThreadLocal<>();

    @Override
    public String name() {
        return "java";
    }

    @Override
    public String description() {
        return "scalar table lookup";
    }

    @Override
    public MatrixOp prepare(byte[][] matrix) {
        return new Op(matrix);
    }

    private static byte[][] staging(int count) {
        byte[][] s = STAGING.get();
        if (s == null || s.length < count) {
            s = new byte[Math.max(count, 32)][TILE];
            STAGING.set(s);
        }
        return s;
    }

    static final class Op extends AbstractMatrixOp {
        Op(byte[][] m) {
            super(m);
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
            byte[][] stage = null;
            byte[][] inArr = new byte[cols][];
            int[] inOff = new int[cols];
            byte[][] outArr = new byte[rows][];
            int[] outOff = new int[rows];
            for (int base = 0; base < len; base += TILE) {
                int n = Math.min(TILE, len - base);
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
                for (int i = 0; i < rows; i++) {
                    byte[] o = outArr[i];
                    int oo = outOff[i];
                    boolean fresh = !accumulate;
                    for (int j = 0; j < cols; j++) {
                        int c = matrix[i * cols + j] & 0xff;
                        if (c == 0) {
                            continue;
                        }
                        byte[] x = inArr[j];
                        int xo = inOff[j];
                        if (c == 1) {
                            if (fresh) {
                                System.arraycopy(x, xo, o, oo, n);
                            } else {
                                for (int t = 0; t < n; t++) {
                                    o[oo + t] ^= x[xo + t];
                                }
                            }
                        } else {
                            byte[] table = Gf256.mulTable(c);
                            if (fresh) {
                                for (int t = 0; t < n; t++) {
                                    o[oo + t] = table[x[xo + t] & 0xff];
                                }
                            } else {
                                for (int t = 0; t < n; t++) {
                                    o[oo + t] ^= table[x[xo + t] & 0xff];
                                }
                            }
                        }
                        fresh = false;
                    }
                    if (fresh) {
                        Arrays.fill(o, oo, oo + n, (byte) 0);
                    }
                    if (!out[i].hasArray()) {
                        out[i].put(out[i].position() + base, o, oo, n);
                    }
                }
            }
        }
    }
}
