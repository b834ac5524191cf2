package io.hayloft.erasure;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

/** Test fixtures: stripes in memory, and readers that count and log every byte a codec reads. */
final class Stripes {

    private Stripes() {
    }

    static byte[][] random(Random rnd, int units, int size) {
        byte[][] u = new byte[units][size];
        for (byte[] b : u) {
            rnd.nextBytes(b);
        }
        return u;
    }

    /** Encodes in memory and returns all k + r units. */
    static byte[][] encode(ErasureCodec codec, byte[][] data) {
        int k = codec.dataUnits();
        int r = codec.parityUnits();
        int n = data[0].length;
        byte[][] all = new byte[k + r][];
        ByteBuffer[] d = new ByteBuffer[k];
        ByteBuffer[] p = new ByteBuffer[r];
        for (int j = 0; j < k; j++) {
            all[j] = data[j].clone();
            d[j] = ByteBuffer.wrap(all[j]);
        }
        for (int i = 0; i < r; i++) {
            all[k + i] = new byte[n];
            p[i] = ByteBuffer.wrap(all[k + i]);
        }
        codec.encode(d, p);
        return all;
    }

    static ByteBuffer[] wrap(byte[][] units) {
        ByteBuffer[] b = new ByteBuffer[units.length];
        for (int i = 0; i < units.length; i++) {
            b[i] = ByteBuffer.wrap(units[i]);
        }
        return b;
    }

    /** A reader over in-memory units that refuses the forbidden ones and records every read. */
    static final class CountingReader implements UnitReader {
        final byte[][] units;
        final boolean[] forbidden;
        final AtomicLong bytes = new AtomicLong();
        final List<ReadRange> log = Collections.synchronizedList(new ArrayList<>());

        CountingReader(byte[][] units, int... forbidden) {
            this.units = units;
            this.forbidden = new boolean[units.length];
            for (int f : forbidden) {
                this.forbidden[f] = true;
            }
        }

        @Override
        public void read(int unit, long offset, ByteBuffer dst) throws IOException {
            if (forbidden[unit]) {
                throw new IOException("unit " + unit + " is unavailable and must not be read");
            }
            int n = dst.remaining();
            dst.put(units[unit], (int) offset, n);
            bytes.addAndGet(n);
            log.add(new ReadRange(unit, offset, n));
        }
    }

    /** A writer that fills in-memory units. */
    static UnitWriter into(byte[][] units) {
        return (unit, offset, src) -> src.get(units[unit], (int) offset, src.remaining());
    }

    static String hex(byte[] b, int from, int to) {
        StringBuilder sb = new StringBuilder();
        for (int i = from; i < to; i++) {
            if (sb.length() > 0) {
                sb.append(' ');
            }
            sb.append(String.format("%02x", b[i] & 0xff));
        }
        return sb.toString();
    }
}
