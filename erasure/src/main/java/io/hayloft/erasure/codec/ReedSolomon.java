package io.hayloft.erasure.codec;

import io.hayloft.erasure.*;
import io.hayloft.erasure.kernel.GfKernel;
import java.nio.ByteBuffer;
import java.util.List;

/** Placeholder while the implementation lands. */
public final class ReedSolomon implements ErasureCodec {
    public ReedSolomon(int k, int r, GfKernel kernel, int chunkSize) { throw new UnsupportedOperationException("not yet"); }
    public CodecKind kind() { throw new UnsupportedOperationException(); }
    public int dataUnits() { throw new UnsupportedOperationException(); }
    public int parityUnits() { throw new UnsupportedOperationException(); }
    public int substripes() { throw new UnsupportedOperationException(); }
    public int chunkSize() { throw new UnsupportedOperationException(); }
    public GfKernel kernel() { throw new UnsupportedOperationException(); }
    public void encode(ByteBuffer[] data, ByteBuffer[] parity) { throw new UnsupportedOperationException(); }
    public void decode(ByteBuffer[] units, int... erased) { throw new UnsupportedOperationException(); }
    public void encode(long unitSize, UnitReader data, UnitWriter parity) { throw new UnsupportedOperationException(); }
    public void decode(long unitSize, int[] erased, UnitReader survivors, UnitWriter out) { throw new UnsupportedOperationException(); }
    public List<ReadRange> planRepair(long unitSize, int lost, int... unavailable) { throw new UnsupportedOperationException(); }
    public long repair(long unitSize, int lost, int[] unavailable, UnitReader source, UnitWriter out) { throw new UnsupportedOperationException(); }
    public long readRange(long unitSize, int unit, long offset, ByteBuffer dst, int[] unavailable, UnitReader source) { throw new UnsupportedOperationException(); }
}
