package io.hayloft.raid;

import io.hayloft.common.wire.StripeMap;
import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.erasure.CodecKind;
import io.hayloft.erasure.ErasureCodec;
import io.hayloft.erasure.TooManyErasuresException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Reads needles of erasure-coded volumes (DESIGN.md "Reads of cold data"). Healthy: one range read
 * from the store holding the needle's block (two when the needle crosses a block boundary).
 * Degraded — the store is down, slower than the request deadline, or the needle fails its CRC —
 * the range is rebuilt from the same range of {@code k} other blocks of the stripe with
 * {@link ErasureCodec#readRange}, holding at most {@code k × needle size} bytes; a block that fails
 * during the rebuild is added to the unavailable set and the rebuild retried. More than {@code r}
 * unavailable blocks is a {@link StripeLostException} that says so.
 *
 * <p>Deletes made after encoding are honoured through the directory's photo record, which the
 * lookup returns. Stripe maps and needle indexes are cached per volume; a read that fails checks the
 * directory's map, and if a reclaim replaced it (another job id) reads again from the new one.
 *
 * <p>Thread-safe; the caches are concurrent maps and codecs are thread-safe.
 */
public final class ColdReader implements AutoCloseable {

    /** More blocks of a stripe are unavailable than the code tolerates. */
    public static final class StripeLostException extends IOException {
        StripeLostException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private record ColdVolume(StripeMap map, VolumeIndex index, ErasureCodec codec) {
    }

    private final Cluster cluster;
    private final Map<Integer, ColdVolume> volumes = new ConcurrentHashMap<>();
    private volatile Map<String, Cluster.StoreRef> stores;
    private volatile long storesAt;
    private final LongAdder healthy = new LongAdder();
    private final LongAdder degraded = new LongAdder();
    private final LongAdder bytesRead = new LongAdder();

    public ColdReader(Cluster cluster) {
        this.cluster = cluster;
    }

    public long healthyReads() {
        return healthy.sum();
    }

    public long degradedReads() {
        return degraded.sum();
    }

    public long bytesRead() {
        return bytesRead.sum();
    }

    /**
     * The data of needle (key, alt), or null when the photo is deleted or has no such needle.
     *
     * @throws IllegalStateException when the photo's volume is not erasure-coded (read its replicas)
     * @throws StripeLostException when more than r blocks of the needle's stripe are unavailable
     */
    public byte[] get(long key, int alt) throws IOException {
        return get(key, alt, null);
    }

    /** As {@link #get(long, int)}, and null when {@code cookie} (if given) is not the photo's: a wrong cookie looks missing. */
    public byte[] get(long key, int alt, Long cookie) throws IOException {
        JsonNode l = cluster.lookup(key);
        if (cookie != null && cookie != Long.parseUnsignedLong(l.get("cookie").asText(), 16)) {
            return null;
        }
        if (l.get("deleted").asBoolean()) {
            return null;
        }
        String state = l.get("volumeState").asText();
        if (!state.equals("ERASURE_CODED") && !state.equals("DEGRADED") && !state.equals("REPAIRING")) {
            throw new IllegalStateException("photo " + key + " is on volume " + l.get("volume").asInt() + " in state " + state
                    + ", not erasure-coded; read its replicas");
        }
        int id = l.get("volume").asInt();
        ColdVolume cv = volume(id);
        try {
            return needle(cv, l, key, alt);
        } catch (IOException failed) {
            if (!replaced(cv)) {
                throw failed;
            }
            return needle(volume(id), l, key, alt); // a reclaim swapped the map: read from the new one
        }
    }

    private byte[] needle(ColdVolume cv, JsonNode l, long key, int alt) throws IOException {
        VolumeIndex.Entry e = cv.index().find(key, alt);
        if (e == null || e.deleted()) {
            return null;
        }
        long photoCookie = Long.parseUnsignedLong(l.get("cookie").asText(), 16);
        try {
            return NeedleFormat.data(read(cv, e.offset(), e.length(), false), key, alt, photoCookie);
        } catch (NeedleFormat.CorruptNeedleException first) {
            try {
                return NeedleFormat.data(read(cv, e.offset(), e.length(), true), key, alt, photoCookie);
            } catch (NeedleFormat.CorruptNeedleException again) {
                throw new IOException("needle " + key + "/" + alt + " of volume " + cv.map().volume()
                        + " is corrupt even when rebuilt from other blocks: " + again.getMessage(), again);
            }
        }
    }

    /** Forgets a volume's cached stripe map (after a repair moved a block). */
    public void invalidate(int volume) {
        ColdVolume cv = volumes.remove(volume);
        if (cv != null) {
            cv.codec().close();
        }
    }

    private ColdVolume volume(int id) throws IOException {
        ColdVolume cv = volumes.get(id);
        if (cv != null) {
            return cv;
        }
        StripeMap m = cluster.stripeMap(id);
        if (m == null || !StripeMap.COMMITTED.equals(m.status())) {
            throw new IOException("volume " + id + " has no committed stripe map");
        }
        VolumeIndex index = readIndex(m);
        ErasureCodec codec = ErasureCodec.create(CodecKind.fromWireName(m.codec()), m.k(), m.r());
        ColdVolume fresh = new ColdVolume(m, index, codec);
        ColdVolume raced = volumes.putIfAbsent(id, fresh);
        if (raced != null) {
            codec.close();
            return raced;
        }
        return fresh;
    }

    private VolumeIndex readIndex(StripeMap m) throws IOException {
        IOException last = null;
        Map<String, Cluster.StoreRef> s = stores(false);
        for (String holder : m.index().holders()) {
            Cluster.StoreRef ref = s.get(holder);
            if (ref == null || !ref.up()) {
                continue;
            }
            try {
                byte[] b = cluster.readBlock(ref.address(), m.index().name());
                if (b.length != m.index().length() || EncodeJob.crc(b, 0, b.length) != m.index().crc32c()) {
                    throw new IOException("index block " + m.index().name() + " on " + holder + " fails its CRC32C");
                }
                return VolumeIndex.decode(b);
            } catch (IOException e) {
                last = e;
            }
        }
        throw new IOException("volume " + m.volume() + ": no copy of its needle index is readable (holders "
                + m.index().holders() + ")", last);
    }

    private Map<String, Cluster.StoreRef> stores(boolean refresh) throws IOException {
        Map<String, Cluster.StoreRef> s = stores;
        if (s == null || refresh || System.currentTimeMillis() - storesAt > 1000) {
            s = cluster.stores();
            stores = s;
            storesAt = System.currentTimeMillis();
        }
        return s;
    }

    /** Reads bytes [offset, offset + length) of the volume file from its blocks. */
    private ByteBuffer read(ColdVolume cv, long offset, int length, boolean forceDegraded) throws IOException {
        StripeMap m = cv.map();
        long b = m.blockSize();
        ByteBuffer out = ByteBuffer.allocate(length);
        while (out.hasRemaining()) {
            long pos = offset + out.position();
            long block = pos / b;
            int stripe = (int) (block / m.k());
            int unit = (int) (block % m.k());
            long inBlock = pos % b;
            int n = (int) Math.min(out.remaining(), b - inBlock);
            ByteBuffer piece = out.slice().limit(n);
            boolean done = false;
            StripeMap.Block blk = m.stripes().get(stripe).blocks().get(unit);
            Cluster.StoreRef ref = stores(false).get(blk.store());
            if (!forceDegraded && ref != null && ref.up()) {
                try {
                    byte[] got = cluster.readBlock(ref.address(), blk.name(), inBlock, n);
                    bytesRead.add(got.length);
                    piece.put(got);
                    done = true;
                    healthy.increment();
                } catch (IOException e) {
                    // fall through to a degraded read of this piece
                }
            }
            if (!done) {
                degradedRead(cv, stripe, unit, inBlock, piece);
                degraded.increment();
            }
            out.position(out.position() + n);
        }
        return out.flip();
    }

    private void degradedRead(ColdVolume cv, int stripe, int unit, long inBlock, ByteBuffer dst) throws IOException {
        StripeMap m = cv.map();
        List<StripeMap.Block> blocks = m.stripes().get(stripe).blocks();
        Map<String, Cluster.StoreRef> s = stores(true);
        TreeSet<Integer> unavailable = new TreeSet<>();
        for (int u = 0; u < blocks.size(); u++) {
            Cluster.StoreRef ref = s.get(blocks.get(u).store());
            if (u != unit && (ref == null || !ref.up())) {
                unavailable.add(u);
            }
        }
        int start = dst.position();
        while (true) {
            dst.position(start);
            int[] un = unavailable.stream().mapToInt(Integer::intValue).toArray();
            try {
                long n = cv.codec().readRange(m.blockSize(), unit, inBlock, dst, un, (u, off, into) -> {
                    Cluster.StoreRef ref = s.get(blocks.get(u).store());
                    try {
                        byte[] got = cluster.readBlock(ref.address(), blocks.get(u).name(), off, into.remaining());
                        into.put(got);
                    } catch (IOException e) {
                        throw new UnitFailed(u, e);
                    }
                });
                bytesRead.add(n);
                return;
            } catch (UnitFailed f) {
                unavailable.add(f.unit);
            } catch (TooManyErasuresException e) {
                TreeSet<Integer> lost = new TreeSet<>(unavailable);
                lost.add(unit);
                throw new StripeLostException("volume " + m.volume() + " stripe " + stripe + ": " + lost.size() + " of "
                        + blocks.size() + " blocks unavailable (units " + lost + "), more than the " + m.r()
                        + " the " + m.codec() + " code tolerates; the needle cannot be read", e);
            }
        }
    }

    // ------------------------------------------------------------------ reclaim support

    /**
     * True (and the cached map forgotten) when the directory's committed map of {@code cv}'s volume
     * is now another job: a reclaim replaced it, and the cached blocks may be gone.
     */
    private boolean replaced(ColdVolume cv) throws IOException {
        StripeMap now = cluster.stripeMap(cv.map().volume());
        if (now == null || now.job().equals(cv.map().job())) {
            return false;
        }
        if (volumes.remove(cv.map().volume(), cv)) {
            cv.codec().close();
        }
        return true;
    }

    /** The committed stripe map this reader uses for {@code volume} (cached). */
    StripeMap committedMap(int volume) throws IOException {
        return volume(volume).map();
    }

    /** The needle index this reader uses for {@code volume} (cached). */
    VolumeIndex index(int volume) throws IOException {
        return volume(volume).index();
    }

    /** Bytes {@code [offset, offset + length)} of the encoded volume file, degraded if need be; unchecked. */
    byte[] rawRange(int volume, long offset, int length) throws IOException {
        return read(volume(volume), offset, length, false).array();
    }

    /**
     * The whole needle {@code e} as stored (header, data, footer, padding), checked (magic, CRC32C,
     * key, alt); rebuilt from other blocks if the direct read is corrupt.
     */
    byte[] rawNeedle(int volume, VolumeIndex.Entry e) throws IOException {
        ColdVolume cv = volume(volume);
        ByteBuffer b = read(cv, e.offset(), e.length(), false);
        try {
            NeedleFormat.check(b, e.key(), e.alt());
        } catch (NeedleFormat.CorruptNeedleException first) {
            b = read(cv, e.offset(), e.length(), true);
            try {
                NeedleFormat.check(b, e.key(), e.alt());
            } catch (NeedleFormat.CorruptNeedleException again) {
                throw new IOException("needle " + e.key() + "/" + e.alt() + " of volume " + volume
                        + " is corrupt even when rebuilt from other blocks: " + again.getMessage(), again);
            }
        }
        return b.array();
    }

    /** One block failed while rebuilding a range. */
    private static final class UnitFailed extends IOException {
        final int unit;

        UnitFailed(int unit, IOException cause) {
            super("unit " + unit + ": " + cause.getMessage(), cause);
            this.unit = unit;
        }
    }

    @Override
    public void close() {
        for (Integer id : new ArrayList<>(volumes.keySet())) {
            invalidate(id);
        }
    }
}
