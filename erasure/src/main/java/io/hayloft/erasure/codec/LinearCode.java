package io.hayloft.erasure.codec;

import io.hayloft.erasure.CodecKind;
import io.hayloft.erasure.ErasureCodec;
import io.hayloft.erasure.ReadRange;
import io.hayloft.erasure.TooManyErasuresException;
import io.hayloft.erasure.UnitReader;
import io.hayloft.erasure.UnitWriter;
import io.hayloft.erasure.gf.SpanSolver;
import io.hayloft.erasure.kernel.GfKernel;
import io.hayloft.erasure.kernel.MatrixOp;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The machinery every linear systematic code shares. A unit is cut into {@link #substripes()} equal
 * pieces ("halves" for Hitchhiker); piece {@code p = unit * S + s}. Every piece is a known linear
 * combination of the {@code S * k} data pieces, given by {@link #pieceVector}. Decoding, repair and
 * degraded reads are all "compute these target pieces from pieces that can be read": a
 * {@link SpanSolver} picks the coefficients, a {@link Plan} caches them as a prepared
 * {@link MatrixOp}, and the plan runs position by position in chunks of at most {@link #chunkSize()}
 * bytes, so memory stays bounded whatever the unit size. Subclasses supply the vectors, the encoder
 * and the preferred read sets.
 *
 * <p>Thread-safe: state is immutable except the plan cache and the free chunk buffers, concurrent
 * maps. Plans beyond {@link #PLAN_CACHE_LIMIT} are built, used once and closed. A streaming call
 * takes its chunk buffers from the free list and returns them when it ends, so a codec keeps at most
 * {@code 2 * (k + r) * chunkSize} bytes of buffers between calls.
 */
public abstract class LinearCode implements ErasureCodec {

    static final int PLAN_CACHE_LIMIT = 4096;

    protected final CodecKind kind;
    protected final int k;
    protected final int r;
    protected final int substripes;
    protected final GfKernel kernel;
    protected final int chunkSize;
    private final Map<String, Plan> plans = new ConcurrentHashMap<>();
    /** Free chunk buffers by capacity, kept between streaming calls; see {@link #allocate}. */
    private final Map<Integer, Deque<ByteBuffer>> scratch = new ConcurrentHashMap<>();
    private final AtomicLong scratchBytes = new AtomicLong();
    private volatile boolean closed;

    protected LinearCode(CodecKind kind, int k, int r, int substripes, GfKernel kernel, int chunkSize) {
        if (kernel == null) {
            throw new IllegalArgumentException("kernel is required");
        }
        if (chunkSize < 16 || chunkSize % substripes != 0) {
            throw new IllegalArgumentException("chunkSize must be >= 16 and a multiple of " + substripes + ", was " + chunkSize);
        }
        this.kind = kind;
        this.k = k;
        this.r = r;
        this.substripes = substripes;
        this.kernel = kernel;
        this.chunkSize = chunkSize;
    }

    /** The coefficient vector of piece {@code p} over the {@code S * k} data pieces. */
    protected abstract byte[] pieceVector(int piece);

    /**
     * Encodes one range of every substripe: {@code data[s * k + j]} holds substripe {@code s} of data
     * unit {@code j}; writes {@code parity[s * r + i]}. Every buffer has {@code len} bytes from its
     * position.
     */
    protected abstract void encodePieces(ByteBuffer[] data, ByteBuffer[] parity, int len);

    /**
     * The pieces a repair of {@code lost} should try first when only it is lost, or {@code null} to
     * read {@code k} whole units.
     */
    protected int[] preferredRepairReads(int lost) {
        return null;
    }

    @Override
    public final CodecKind kind() {
        return kind;
    }

    @Override
    public final int dataUnits() {
        return k;
    }

    @Override
    public final int parityUnits() {
        return r;
    }

    @Override
    public final int substripes() {
        return substripes;
    }

    @Override
    public final int chunkSize() {
        return chunkSize;
    }

    @Override
    public final GfKernel kernel() {
        return kernel;
    }

    @Override
    public String toString() {
        return kind + "(" + k + "," + r + ") on " + kernel.name();
    }

    // ------------------------------------------------------------------ in memory

    @Override
    public void encode(ByteBuffer[] data, ByteBuffer[] parity) {
        checkOpen();
        int n = checkBuffers("data", data, k, -1);
        checkBuffers("parity", parity, r, n);
        checkUnitSize(n);
        int piece = n / substripes;
        ByteBuffer[] d = new ByteBuffer[substripes * k];
        ByteBuffer[] p = new ByteBuffer[substripes * r];
        for (int s = 0; s < substripes; s++) {
            for (int j = 0; j < k; j++) {
                d[s * k + j] = slice(data[j], s * piece, piece);
            }
            for (int i = 0; i < r; i++) {
                p[s * r + i] = slice(parity[i], s * piece, piece);
            }
        }
        encodePieces(d, p, piece);
    }

    @Override
    public void decode(ByteBuffer[] units, int... erased) {
        checkOpen();
        int n = checkBuffers("unit", units, k + r, -1);
        checkUnitSize(n);
        int[] lost = checkUnits(erased, "erased");
        if (lost.length == 0) {
            return;
        }
        Plan plan = fullDecodePlan(lost, lost);
        int piece = n / substripes;
        ByteBuffer[] in = new ByteBuffer[plan.reads().length];
        for (int i = 0; i < in.length; i++) {
            int p = plan.reads()[i];
            in[i] = slice(units[p / substripes], (p % substripes) * piece, piece);
        }
        ByteBuffer[] out = new ByteBuffer[plan.targets().length];
        for (int i = 0; i < out.length; i++) {
            int p = plan.targets()[i];
            out[i] = slice(units[p / substripes], (p % substripes) * piece, piece);
        }
        try {
            plan.op().apply(in, out, piece);
        } finally {
            release(plan);
        }
    }

    // ------------------------------------------------------------------ streaming

    /**
     * Reads {@code chunkSize / substripes} bytes of every piece of every data unit at a time (so
     * {@code k * chunkSize} bytes of data in memory whatever the code, and a Hitchhiker chunk stays as
     * cache-resident as a Reed-Solomon one), computes all parity pieces of that range in one
     * {@link #encodePieces} call, and writes them.
     */
    @Override
    public void encode(long unitSize, UnitReader data, UnitWriter parity) throws IOException {
        checkOpen();
        checkUnitSize(unitSize);
        long piece = unitSize / substripes;
        int chunk = (int) Math.min(chunkSize / substripes, Math.max(piece, 1));
        ByteBuffer[] d = allocate(substripes * k, chunk);
        ByteBuffer[] p = allocate(substripes * r, chunk);
        try {
            encodeChunks(piece, chunk, d, p, data, parity);
        } finally {
            recycle(d);
            recycle(p);
        }
    }

    private void encodeChunks(long piece, int chunk, ByteBuffer[] d, ByteBuffer[] p, UnitReader data, UnitWriter parity)
            throws IOException {
        for (long t = 0; t < piece; t += chunk) {
            int len = (int) Math.min(chunk, piece - t);
            for (int s = 0; s < substripes; s++) {
                for (int j = 0; j < k; j++) {
                    readFully(data, j, s * piece + t, d[s * k + j], len);
                }
            }
            for (ByteBuffer b : p) {
                b.clear();
            }
            encodePieces(d, p, len);
            for (int s = 0; s < substripes; s++) {
                for (int i = 0; i < r; i++) {
                    ByteBuffer b = p[s * r + i];
                    b.clear().limit(len);
                    parity.write(k + i, s * piece + t, b);
                }
            }
        }
    }

    @Override
    public void decode(long unitSize, int[] erased, UnitReader survivors, UnitWriter out) throws IOException {
        checkOpen();
        checkUnitSize(unitSize);
        int[] lost = checkUnits(erased, "erased");
        if (lost.length == 0) {
            return;
        }
        Plan plan = fullDecodePlan(lost, lost);
        try {
            run(plan, unitSize, survivors, out);
        } finally {
            release(plan);
        }
    }

    @Override
    public List<ReadRange> planRepair(long unitSize, int lost, int... unavailable) {
        checkOpen();
        checkUnitSize(unitSize);
        Plan plan = repairPlan(lost, unavailable);
        try {
            return plan.ranges(substripes, unitSize / substripes, 0, unitSize / substripes);
        } finally {
            release(plan);
        }
    }

    @Override
    public List<ReadRange> planDecode(long unitSize, int... erased) {
        checkOpen();
        checkUnitSize(unitSize);
        int[] lost = checkUnits(erased, "erased");
        if (lost.length == 0) {
            return List.of();
        }
        Plan plan = fullDecodePlan(lost, lost);
        try {
            return plan.ranges(substripes, unitSize / substripes, 0, unitSize / substripes);
        } finally {
            release(plan);
        }
    }

    @Override
    public List<ReadRange> planReadRange(long unitSize, int unit, long offset, int length, int... unavailable) {
        checkOpen();
        checkUnitSize(unitSize);
        checkUnit(unit, "unit");
        if (length < 0 || offset < 0 || offset > unitSize - length) {
            throw new IllegalArgumentException("range [" + offset + ", " + (offset + length) + ") is outside the unit of "
                    + unitSize + " bytes");
        }
        long piece = unitSize / substripes;
        List<ReadRange> ranges = new ArrayList<>();
        for (int s = 0; s < substripes; s++) {
            long from = Math.max(offset, s * piece);
            long to = Math.min(offset + length, (s + 1) * piece);
            if (from < to) {
                Plan plan = degradedPlan(unit * substripes + s, unavailable);
                try {
                    ranges.addAll(plan.ranges(substripes, piece, from - s * piece, to - from));
                } finally {
                    release(plan);
                }
            }
        }
        return ranges;
    }

    @Override
    public long repair(long unitSize, int lost, int[] unavailable, UnitReader source, UnitWriter out) throws IOException {
        checkOpen();
        checkUnitSize(unitSize);
        Plan plan = repairPlan(lost, unavailable);
        try {
            return run(plan, unitSize, source, out);
        } finally {
            release(plan);
        }
    }

    @Override
    public long readRange(long unitSize, int unit, long offset, ByteBuffer dst, int[] unavailable, UnitReader source)
            throws IOException {
        checkOpen();
        checkUnitSize(unitSize);
        checkUnit(unit, "unit");
        int len = dst.remaining();
        if (offset < 0 || offset > unitSize - len) {
            throw new IllegalArgumentException("range [" + offset + ", " + (offset + len) + ") is outside the unit of "
                    + unitSize + " bytes");
        }
        long piece = unitSize / substripes;
        long read = 0;
        int base = dst.position();
        for (int s = 0; s < substripes && len > 0; s++) {
            long from = Math.max(offset, s * piece);
            long to = Math.min(offset + len, (s + 1) * piece);
            if (from >= to) {
                continue;
            }
            Plan plan = degradedPlan(unit * substripes + s, unavailable);
            try {
                ByteBuffer[] in = allocate(plan.reads().length, (int) Math.min(chunkSize, to - from));
                for (long t = from; t < to; t += chunkSize) {
                    int n = (int) Math.min(chunkSize, to - t);
                    for (int i = 0; i < in.length; i++) {
                        int p = plan.reads()[i];
                        readFully(source, p / substripes, (p % substripes) * piece + (t - s * piece), in[i], n);
                        read += n;
                    }
                    ByteBuffer target = dst.duplicate();
                    target.limit(base + (int) (t - offset) + n).position(base + (int) (t - offset));
                    plan.op().apply(in, new ByteBuffer[] {target}, n);
                }
            } finally {
                release(plan);
            }
        }
        dst.position(dst.limit());
        return read;
    }

    @Override
    public void close() {
        closed = true;
        for (Plan p : plans.values()) {
            p.op().close();
        }
        plans.clear();
        scratch.clear();
    }

    // ------------------------------------------------------------------ planning

    /** Rebuild {@code targets} (units) treating {@code unavailable} (units) as unreadable: k whole units. */
    private Plan fullDecodePlan(int[] targets, int[] unavailable) {
        int[] missing = union(targets, unavailable);
        if (missing.length > r) {
            throw new TooManyErasuresException(missing, k + r, r);
        }
        String key = "D" + Arrays.toString(targets) + Arrays.toString(missing);
        return cached(key, () -> {
            int[] pieces = piecesOf(targets);
            List<Integer> candidates = new ArrayList<>();
            for (int u = 0; u < k + r; u++) {
                if (Arrays.binarySearch(missing, u) < 0) {
                    for (int s = 0; s < substripes; s++) {
                        candidates.add(u * substripes + s);
                    }
                }
            }
            Plan plan = solve(pieces, candidates, substripes);
            if (plan == null) {
                throw new TooManyErasuresException(missing, k + r, r);
            }
            return plan;
        });
    }

    private Plan repairPlan(int lost, int[] unavailable) {
        checkUnit(lost, "lost unit");
        int[] others = checkUnits(unavailable == null ? new int[0] : unavailable, "unavailable");
        int[] missing = union(new int[] {lost}, others);
        int[] preferred = preferredRepairReads(lost);
        if (preferred != null && missing.length == 1) {
            String key = "R" + lost;
            Plan plan = cached(key, () -> {
                List<Integer> candidates = new ArrayList<>();
                for (int p : preferred) {
                    candidates.add(p);
                }
                return solve(piecesOf(new int[] {lost}), candidates, 1);
            });
            if (plan != null) {
                return plan;
            }
        }
        return fullDecodePlan(new int[] {lost}, missing);
    }

    /** One piece of one unit from the same substripe of k others when possible, else from whole units. */
    private Plan degradedPlan(int piece, int[] unavailable) {
        int unit = piece / substripes;
        int s = piece % substripes;
        int[] others = checkUnits(unavailable == null ? new int[0] : unavailable, "unavailable");
        int[] missing = union(new int[] {unit}, others);
        if (missing.length > r) {
            throw new TooManyErasuresException(missing, k + r, r);
        }
        String key = "G" + piece + Arrays.toString(missing);
        return cached(key, () -> {
            List<Integer> same = new ArrayList<>();
            List<Integer> dirty = new ArrayList<>();
            for (int u = 0; u < k + r; u++) {
                if (Arrays.binarySearch(missing, u) >= 0) {
                    continue;
                }
                int p = u * substripes + s;
                (confinedToSubstripe(pieceVector(p), s) ? same : dirty).add(p);
            }
            same.addAll(dirty);
            Plan plan = solve(new int[] {piece}, same, 1);
            if (plan == null) {
                List<Integer> all = new ArrayList<>();
                for (int u = 0; u < k + r; u++) {
                    if (Arrays.binarySearch(missing, u) < 0) {
                        for (int t = 0; t < substripes; t++) {
                            all.add(u * substripes + t);
                        }
                    }
                }
                plan = solve(new int[] {piece}, all, substripes);
            }
            if (plan == null) {
                throw new TooManyErasuresException(missing, k + r, r);
            }
            return plan;
        });
    }

    private boolean confinedToSubstripe(byte[] v, int s) {
        for (int i = 0; i < v.length; i++) {
            if (v[i] != 0 && i / k != s) {
                return false;
            }
        }
        return true;
    }

    /**
     * Adds candidate reads in order, {@code group} at a time, until every target is expressible; keeps
     * only the reads the result uses. Returns {@code null} if the candidates do not suffice.
     */
    private Plan solve(int[] targets, List<Integer> candidates, int group) {
        int dim = substripes * k;
        SpanSolver solver = new SpanSolver(dim, candidates.size());
        byte[][] coefficients = null;
        for (int c = 0; c < candidates.size(); c++) {
            solver.add(pieceVector(candidates.get(c)));
            if ((c + 1) % group != 0 && c + 1 < candidates.size()) {
                continue;
            }
            coefficients = new byte[targets.length][];
            for (int t = 0; t < targets.length && coefficients != null; t++) {
                coefficients[t] = solver.express(pieceVector(targets[t]));
                if (coefficients[t] == null) {
                    coefficients = null;
                }
            }
            if (coefficients != null) {
                break;
            }
        }
        if (coefficients == null) {
            return null;
        }
        List<Integer> used = new ArrayList<>();
        for (int c = 0; c < solver.reads(); c++) {
            for (byte[] row : coefficients) {
                if (row[c] != 0) {
                    used.add(c);
                    break;
                }
            }
        }
        int[] reads = new int[used.size()];
        byte[][] matrix = new byte[targets.length][used.size()];
        for (int i = 0; i < reads.length; i++) {
            reads[i] = candidates.get(used.get(i));
            for (int t = 0; t < targets.length; t++) {
                matrix[t][i] = coefficients[t][used.get(i)];
            }
        }
        return new Plan(reads, targets.clone(), kernel.prepare(matrix), false);
    }

    private Plan cached(String key, Supplier<Plan> build) {
        Plan p = plans.get(key);
        if (p != null) {
            return p;
        }
        p = build.get();
        if (p == null) {
            return null;
        }
        if (plans.size() >= PLAN_CACHE_LIMIT) {
            return new Plan(p.reads(), p.targets(), p.op(), true);
        }
        Plan prior = plans.putIfAbsent(key, p);
        if (prior != null) {
            p.op().close();
            return prior;
        }
        return p;
    }

    /** Closes a plan that did not make it into the cache (the cache was full). */
    private static void release(Plan plan) {
        if (plan.ephemeral()) {
            plan.op().close();
        }
    }

    // ------------------------------------------------------------------ execution

    /** Runs a plan over whole units in chunks, writing every target piece; returns bytes read. */
    private long run(Plan plan, long unitSize, UnitReader source, UnitWriter out) throws IOException {
        long piece = unitSize / substripes;
        int chunk = (int) Math.min(chunkSize, Math.max(piece, 1));
        ByteBuffer[] in = allocate(plan.reads().length, chunk);
        ByteBuffer[] res = allocate(plan.targets().length, chunk);
        try {
            return runChunks(plan, piece, chunk, in, res, source, out);
        } finally {
            recycle(in);
            recycle(res);
        }
    }

    private long runChunks(Plan plan, long piece, int chunk, ByteBuffer[] in, ByteBuffer[] res, UnitReader source,
            UnitWriter out) throws IOException {
        long read = 0;
        for (long t = 0; t < piece; t += chunk) {
            int len = (int) Math.min(chunk, piece - t);
            for (int i = 0; i < in.length; i++) {
                int p = plan.reads()[i];
                readFully(source, p / substripes, (p % substripes) * piece + t, in[i], len);
                read += len;
            }
            for (ByteBuffer b : res) {
                b.clear();
            }
            plan.op().apply(in, res, len);
            for (int i = 0; i < res.length; i++) {
                int p = plan.targets()[i];
                res[i].clear().limit(len);
                out.write(p / substripes, (p % substripes) * piece + t, res[i]);
            }
        }
        return read;
    }

    private static void readFully(UnitReader reader, int unit, long offset, ByteBuffer buf, int len) throws IOException {
        buf.clear().limit(len);
        reader.read(unit, offset, buf);
        if (buf.hasRemaining()) {
            throw new IOException("reader returned " + buf.position() + " of " + len + " bytes of unit " + unit
                    + " at offset " + offset);
        }
        buf.flip();
    }

    /**
     * Chunk buffers of {@code size} bytes: recycled ones when there are, else new ones from the kernel
     * (direct for ISA-L: allocating 14 direct MiB per encode call, and the GC that direct memory
     * reservation triggers, cost more than a whole 1 MiB-unit encode).
     */
    private ByteBuffer[] allocate(int count, int size) {
        ByteBuffer[] b = new ByteBuffer[count];
        Deque<ByteBuffer> free = scratch.get(size);
        for (int i = 0; i < count; i++) {
            ByteBuffer x = free == null ? null : free.pollFirst();
            if (x != null) {
                scratchBytes.addAndGet(-size);
            }
            b[i] = x != null ? x.clear() : kernel.allocate(size);
        }
        return b;
    }

    /** Keeps buffers for the next call, up to {@link #scratchLimit()} bytes per codec. */
    private void recycle(ByteBuffer[] buffers) {
        for (ByteBuffer x : buffers) {
            int size = x.capacity();
            if (closed || scratchBytes.addAndGet(size) > scratchLimit()) {
                scratchBytes.addAndGet(-size);
                continue;
            }
            scratch.computeIfAbsent(size, s -> new ConcurrentLinkedDeque<>()).offerFirst(x);
        }
    }

    /** Two streaming calls' worth of chunk buffers: {@code 2 * (k + r) * chunkSize} bytes. */
    private long scratchLimit() {
        return 2L * (k + r) * chunkSize;
    }

    // ------------------------------------------------------------------ validation and helpers

    protected final void checkOpen() {
        if (closed) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    private void checkUnitSize(long n) {
        if (n < 0) {
            throw new IllegalArgumentException("unit size must be >= 0, was " + n);
        }
        if (n % substripes != 0) {
            throw new IllegalArgumentException(kind + " needs a unit size that is a multiple of " + substripes
                    + " (hop-and-couple halves), was " + n + " bytes");
        }
    }

    /** Checks a buffer array; returns the common remaining size. {@code expect < 0}: take the first. */
    private static int checkBuffers(String what, ByteBuffer[] buffers, int count, int expect) {
        if (buffers == null || buffers.length != count) {
            throw new IllegalArgumentException("expected " + count + " " + what + " buffers, got "
                    + (buffers == null ? "null" : buffers.length));
        }
        int n = expect;
        for (int i = 0; i < count; i++) {
            if (buffers[i] == null) {
                throw new IllegalArgumentException(what + " buffer " + i + " is null");
            }
            if (n < 0) {
                n = buffers[i].remaining();
            } else if (buffers[i].remaining() != n) {
                throw new IllegalArgumentException(what + " buffer " + i + " has " + buffers[i].remaining()
                        + " bytes remaining, expected " + n + " like the others");
            }
        }
        return n;
    }

    private void checkUnit(int unit, String what) {
        if (unit < 0 || unit >= k + r) {
            throw new IllegalArgumentException(what + " " + unit + " is not a unit of " + kind + "(" + k + "," + r
                    + "): expected 0.." + (k + r - 1));
        }
    }

    private int[] checkUnits(int[] units, String what) {
        TreeSet<Integer> set = new TreeSet<>();
        for (int u : units) {
            checkUnit(u, what);
            if (!set.add(u)) {
                throw new IllegalArgumentException(what + " unit " + u + " is listed twice");
            }
        }
        return set.stream().mapToInt(Integer::intValue).toArray();
    }

    private int[] piecesOf(int[] units) {
        int[] p = new int[units.length * substripes];
        for (int i = 0; i < units.length; i++) {
            for (int s = 0; s < substripes; s++) {
                p[i * substripes + s] = units[i] * substripes + s;
            }
        }
        return p;
    }

    private static int[] union(int[] a, int[] b) {
        TreeSet<Integer> set = new TreeSet<>();
        for (int x : a) {
            set.add(x);
        }
        for (int x : b) {
            set.add(x);
        }
        return set.stream().mapToInt(Integer::intValue).toArray();
    }

    static ByteBuffer slice(ByteBuffer b, int offset, int len) {
        return b.slice(b.position() + offset, len);
    }

    /** Unit vector {@code e_i} of the given dimension. */
    static byte[] unitVector(int dim, int i) {
        byte[] v = new byte[dim];
        v[i] = 1;
        return v;
    }
}
