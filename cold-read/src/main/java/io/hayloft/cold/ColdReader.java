package io.hayloft.cold;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.hayloft.erasure.CodecKind;
import io.hayloft.erasure.ErasureCodec;
import io.hayloft.erasure.ReadRange;
import io.hayloft.erasure.TooManyErasuresException;
import io.hayloft.format.errors.DirectoryErrors;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.wire.VolumeIndex;
import io.hayloft.format.wire.Wire;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads needles of erasure-coded volumes (docs/raid.md "Reads"; docs/architecture.md "Data paths"). Healthy: one range read
 * from the store holding the needle's block (two when the needle crosses a block boundary).
 * Degraded — the directory reports the store down, the direct read fails, has not answered within
 * the hedge delay (then the first of the two answers wins), or the needle fails its CRC — the range
 * is rebuilt from the same range of {@code k} other blocks of the stripe: the ranges
 * {@link ErasureCodec#planReadRange} names are fetched from their stores all at once and
 * {@link ErasureCodec#readRange} decodes from memory, so at most {@code k × needle size} bytes are
 * held and the rebuild takes one round trip to the slowest source. A source that fails or passes the
 * request deadline is added to the unavailable set and the round planned again. More than {@code r}
 * unavailable blocks is a {@link StripeLostException} that says so.
 *
 * <p>A read names the volume (the photo id and the cold URL carry it); the directory is never asked
 * about a photo. The needle's own header decides the cookie: a wrong one reads exactly like a missing
 * needle. Deletes made before encoding are flagged in the needle index; deletes made after are
 * honoured through the volume's delete log in the directory: every read first asks for the entries
 * after the head this reader has ({@code GET /v1/volumes/{id}/deletes?after=}, usually an empty
 * answer), and a needle whose (key, cookie) the log holds is missing. So a delete is honoured at once
 * by every cold reader, at the cost of one small directory call per cold read — as f4's readers
 * consult its key store on each read. Stripe maps, needle indexes and the deleted (key, cookie)
 * pairs are cached per volume, bounded by the bytes they hold (least recently used first out); a
 * read that fails checks the directory's map, and if a reclaim replaced it (another job id) reads
 * again from the new one.
 *
 * <p>Thread-safe; the caches are concurrent maps and codecs are thread-safe.
 */
public final class ColdReader implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ColdReader.class);

    /** Default hedge delay: a direct read slower than this is raced by a degraded read. */
    public static final long DEFAULT_HEDGE_MILLIS = 200;

    /** More blocks of a stripe are unavailable than the code tolerates. */
    public static final class StripeLostException extends IOException {
        StripeLostException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private record ColdVolume(StripeMap map, VolumeIndex index, ErasureCodec codec, Deletes deletes) {
        /**
         * Bytes held: the index's arrays, about 96 bytes per block of the map and 64 per delete-log
         * entry read when the volume was loaded (entries logged later are not weighed again).
         */
        int weight() {
            return (int) Math.min(Integer.MAX_VALUE, index.memoryBytes() + 96L * map.allBlocks().size()
                    + Deletes.ENTRY_BYTES * deletes.size());
        }
    }

    /**
     * A coded volume's delete log as far as this reader has read it: the deleted (key, cookie)
     * pairs and the highest sequence number read. Entries are added before the head moves past
     * them, so a reader that sees a head also sees every entry up to it. Thread-safe, lock-free:
     * two readers fetching the same entries at once add them twice, harmlessly.
     */
    static final class Deletes {
        /** About what one entry costs in memory (set node, record, boxed fields). */
        static final long ENTRY_BYTES = 64;

        private record Pair(long key, long cookie) {
        }

        private final Set<Pair> pairs = ConcurrentHashMap.newKeySet();
        private final AtomicLong head = new AtomicLong();

        /** True when the log deletes photo {@code key} with cookie {@code cookie}. */
        boolean deleted(long key, long cookie) {
            return pairs.contains(new Pair(key, cookie));
        }

        long head() {
            return head.get();
        }

        int size() {
            return pairs.size();
        }

        /** Adds a page of the log; the head moves to its last entry. */
        void add(int volume, List<Wire.DeleteEntry> entries) throws IOException {
            long last = 0;
            for (Wire.DeleteEntry e : entries) {
                long cookie;
                try {
                    cookie = Long.parseUnsignedLong(e.cookie(), 16);
                } catch (NumberFormatException | NullPointerException bad) {
                    throw new IOException("volume " + volume + ": delete-log entry " + e.seq() + " of key "
                            + Long.toUnsignedString(e.key()) + " has a bad cookie '" + e.cookie() + "'");
                }
                pairs.add(new Pair(e.key(), cookie));
                last = Math.max(last, e.seq());
            }
            long upTo = last;
            head.accumulateAndGet(upTo, Math::max);
        }
    }

    /** Entries asked for per page of a volume's delete log (the directory's most). */
    static final int DELETE_LOG_PAGE = 10_000;

    /** Default bound of the cached needle indexes and stripe maps: 64 MiB, about 2 million needles. */
    public static final long DEFAULT_CACHE_BYTES = 64L << 20;

    private final ClusterReads cluster;
    private final Cache<Integer, ColdVolume> cache;
    private final Map<Integer, ColdVolume> volumes;
    /** One codec per (codec, k, r), kept until {@link #close}: an evicted volume never closes a codec in use. */
    private final Map<String, ErasureCodec> codecs = new ConcurrentHashMap<>();
    private volatile Map<String, ClusterReads.StoreRef> stores;
    private volatile long storesAt;
    private final LongAdder healthy = new LongAdder();
    private final LongAdder degraded = new LongAdder();
    private final LongAdder bytesRead = new LongAdder();
    private final LongAdder hedged = new LongAdder();
    private final LongAdder sourceFailures = new LongAdder();
    private final LongAdder deleteLogReads = new LongAdder();
    private final long hedgeAfterMillis;

    /** A reader that goes degraded when a direct read has not answered within {@link #DEFAULT_HEDGE_MILLIS}. */
    public ColdReader(ClusterReads cluster) {
        this(cluster, DEFAULT_HEDGE_MILLIS);
    }

    /**
     * @param hedgeAfterMillis how long a direct read may take before the range is rebuilt from other
     *                         blocks as well (the first answer wins); the direct read itself gives up
     *                         at the cluster's request deadline
     */
    public ColdReader(ClusterReads cluster, long hedgeAfterMillis) {
        this(cluster, hedgeAfterMillis, DEFAULT_CACHE_BYTES);
    }

    /**
     * @param cacheBytes bound of the cached stripe maps and needle indexes, by their size in memory;
     *                   the least recently used volume is dropped first (and read again when needed)
     */
    public ColdReader(ClusterReads cluster, long hedgeAfterMillis, long cacheBytes) {
        if (hedgeAfterMillis < 1) {
            throw new IllegalArgumentException("hedgeAfterMillis must be >= 1, was " + hedgeAfterMillis);
        }
        if (cacheBytes < 1) {
            throw new IllegalArgumentException("cacheBytes must be >= 1, was " + cacheBytes);
        }
        this.cluster = cluster;
        this.hedgeAfterMillis = hedgeAfterMillis;
        this.cache = Caffeine.newBuilder().maximumWeight(cacheBytes)
                .weigher((Integer id, ColdVolume cv) -> cv.weight()).executor(Runnable::run).build();
        this.volumes = cache.asMap();
    }

    /** Bytes the cached maps and indexes hold now (at most the bound given when built). */
    public long cachedBytes() {
        cache.cleanUp();
        return cache.policy().eviction().orElseThrow().weightedSize().orElseThrow();
    }

    /** Reads that waited past the hedge delay and were rebuilt from other blocks. */
    public long hedgedReads() {
        return hedged.sum();
    }

    /** Source reads of degraded reads that failed (their unit then counted as unavailable). */
    public long sourceFailures() {
        return sourceFailures.sum();
    }

    /** Pages of delete logs read from the directory (at least one per {@link #get}). */
    public long deleteLogReads() {
        return deleteLogReads.sum();
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
     * The data of needle (key, alt) of coded volume {@code volume}, any cookie; or null when the
     * volume is unknown, the photo is deleted or has no such needle.
     *
     * @throws IllegalStateException when {@code volume} is not erasure-coded (read its replicas)
     * @throws StripeLostException when more than r blocks of the needle's stripe are unavailable
     */
    public byte[] get(int volume, long key, int alt) throws IOException {
        return get(volume, key, alt, null);
    }

    /**
     * The data of needle (key, alt) of coded volume {@code volume}, or null when the volume is
     * unknown, the needle is not in its index, is flagged deleted there, is in the volume's delete
     * log with the needle's cookie, or {@code cookie} (if given) is not the cookie in the needle's own
     * header: a wrong cookie reads exactly like a missing needle.
     *
     * <p>One directory call per read: the volume's delete log after the cached head
     * ({@code GET /v1/volumes/{id}/deletes?after=}), so a delete logged before the read began is
     * honoured by every reader at once (as f4's readers consult its key store per read). The stripe
     * map and needle index stay cached.
     *
     * @throws IllegalStateException when {@code volume} is not erasure-coded (no committed stripe map:
     *                               read its replicas)
     * @throws StripeLostException when more than r blocks of the needle's stripe are unavailable
     */
    public byte[] get(int volume, long key, int alt, Long cookie) throws IOException {
        ColdVolume cv = coldVolume(volume);
        if (cv == null) {
            return null;
        }
        if (!syncDeletes(cv)) {
            return null; // the volume disappeared from the directory
        }
        try {
            return needle(cv, key, alt, cookie);
        } catch (IOException failed) {
            if (!replaced(cv)) {
                throw failed;
            }
            ColdVolume now = coldVolume(volume); // a reclaim swapped the map: read from the new one
            return now == null || !syncDeletes(now) ? null : needle(now, key, alt, cookie);
        }
    }

    /**
     * The live needles of photo {@code key} with {@code cookie} in an erasure-coded volume, from its
     * needle index, after reading needle {@code (key, alt)} to prove the photo is there with that
     * cookie (the index holds no cookies; every alternate of a photo shares one): null when that
     * needle is missing, deleted (index flag or delete log) or has another cookie, or the volume is not
     * coded. What {@code stat} and {@code delete} of a cold photo list.
     */
    public List<VolumeIndex.Entry> alts(int volume, long key, int alt, long cookie) throws IOException {
        ColdVolume cv = coldVolume(volume);
        if (cv == null || !syncDeletes(cv)) {
            return null;
        }
        byte[] proof;
        try {
            proof = needle(cv, key, alt, cookie);
        } catch (IOException failed) {
            if (!replaced(cv)) {
                throw failed;
            }
            cv = coldVolume(volume);
            proof = cv == null || !syncDeletes(cv) ? null : needle(cv, key, alt, cookie);
        }
        if (proof == null) {
            return null;
        }
        List<VolumeIndex.Entry> live = new ArrayList<>();
        for (VolumeIndex.Entry e : cv.index().entriesOf(key)) {
            if (!e.deleted()) {
                live.add(e);
            }
        }
        return live;
    }

    private byte[] needle(ColdVolume cv, long key, int alt, Long cookie) throws IOException {
        VolumeIndex.Entry e = cv.index().find(key, alt);
        if (e == null || e.deleted()) {
            return null;
        }
        if (cookie != null && cv.deletes().deleted(key, cookie)) {
            return null; // deleted, or a wrong cookie: either way missing, without reading the needle
        }
        byte[][] data = new byte[1][];
        checkedRead(cv, e, n -> {
            byte[] d = NeedleFormat.data(n, key, alt, cookie);
            data[0] = d == null || cv.deletes().deleted(key, NeedleFormat.cookie(n)) ? null : d;
        });
        return data[0];
    }

    /** Most rebuilds {@link #checkedRead} tries to find the corrupt blocks under a needle. */
    static final int MAX_CORRUPTION_ATTEMPTS = 256;

    /** Adds {@code base ∪ S} for every subset S of {@code from[start..]} of {@code size} more elements. */
    private static void addSubsets(List<Long> from, int size, int start, List<Long> chosen, Set<Long> base, List<Set<Long>> out) {
        if (out.size() >= MAX_CORRUPTION_ATTEMPTS) {
            return;
        }
        if (chosen.size() == size) {
            Set<Long> x = new TreeSet<>(base);
            x.addAll(chosen);
            out.add(x);
            return;
        }
        for (int i = start; i < from.size(); i++) {
            chosen.add(from.get(i));
            addSubsets(from, size, i + 1, chosen, base, out);
            chosen.remove(chosen.size() - 1);
        }
    }

    /** Checks the bytes of a needle; throws when they are corrupt. */
    @FunctionalInterface
    private interface NeedleCheck {
        void check(ByteBuffer needle) throws NeedleFormat.CorruptNeedleException;
    }

    /**
     * Reads needle {@code e} and checks it. When the bytes fail their check, some block the read
     * used is corrupt in place (still listed, wrong bytes): rebuild the needle without every block it
     * touches; if that fails too, a block the rebuild used is also bad, so try again leaving out
     * every other block of the stripe, then every pair, and so on while the code can still rebuild;
     * a needle over more blocks than r (a large needle, small blocks) leaves out its own blocks one,
     * two, ... at a time instead
     * (at most {@link #MAX_CORRUPTION_ATTEMPTS} rebuilds of {@code k} × the needle's bytes, only for a
     * needle that is corrupt).
     *
     * @return the checked bytes
     * @throws IOException naming the needle when no combination of blocks gives a correct needle
     */
    private ByteBuffer checkedRead(ColdVolume cv, VolumeIndex.Entry e, NeedleCheck check) throws IOException {
        ByteBuffer b = read(cv, e.offset(), e.length(), null);
        NeedleFormat.CorruptNeedleException last;
        try {
            check.check(b);
            return b;
        } catch (NeedleFormat.CorruptNeedleException first) {
            last = first;
        }
        StripeMap m = cv.map();
        int n = m.k() + m.r();
        Set<Long> touched = new TreeSet<>();
        for (long block = e.offset() / m.blockSize(); block <= (e.offset() + e.length() - 1) / m.blockSize(); block++) {
            touched.add(block / m.k() * n + block % m.k());
        }
        // Leave out the needle's own blocks, then also 1, 2, ... other blocks of its stripe(s), up to
        // what the code tolerates: the first set that gives a needle passing its check wins.
        List<Long> others = new ArrayList<>();
        for (long t : touched) {
            for (int u = 0; u < n; u++) {
                long other = t / n * n + u;
                if (!touched.contains(other) && !others.contains(other)) {
                    others.add(other);
                }
            }
        }
        List<Set<Long>> attempts = new ArrayList<>();
        if (touched.size() <= m.r()) {
            attempts.add(touched);
            for (int extra = 1; extra <= m.r() - touched.size() && attempts.size() < MAX_CORRUPTION_ATTEMPTS; extra++) {
                addSubsets(others, extra, 0, new ArrayList<>(), touched, attempts);
            }
        }
        // A needle over more blocks than the code can leave out at once (a large needle, small
        // blocks), or whose bad block was not found above: leave out any one block of its stripe(s),
        // then any two, ..., up to r. A set without the needle's own blocks reads them directly and
        // keeps the bad block out of a hedged rebuild (a slow direct read is rebuilt from the others).
        List<Long> own = new ArrayList<>(touched);
        List<Long> all = new ArrayList<>(own);
        all.addAll(others);
        for (int size = 1; size <= m.r() && attempts.size() < MAX_CORRUPTION_ATTEMPTS; size++) {
            List<Set<Long>> more = new ArrayList<>();
            addSubsets(all, size, 0, new ArrayList<>(), Set.of(), more);
            for (Set<Long> x : more) {
                if (attempts.size() < MAX_CORRUPTION_ATTEMPTS && !attempts.contains(x)) {
                    attempts.add(x);
                }
            }
        }
        for (Set<Long> exclude : attempts) {
            try {
                b = read(cv, e.offset(), e.length(), exclude);
                check.check(b);
                LOG.warn("volume {}: needle {}/{} rebuilt without blocks {} (stripe * {} + unit): a block is corrupt in place",
                        m.volume(), e.key(), e.alt(), exclude, n);
                return b;
            } catch (NeedleFormat.CorruptNeedleException again) {
                last = again;
            } catch (StripeLostException tooMany) {
                // this combination leaves too few blocks; try the next
            }
        }
        throw new IOException("needle " + e.key() + "/" + e.alt() + " of volume " + m.volume()
                + " is corrupt even when rebuilt from other blocks: " + last.getMessage(), last);
    }

    /** Forgets a volume's cached stripe map (after a repair moved a block). */
    public void invalidate(int volume) {
        volumes.remove(volume);
    }

    /** The cached volume, loading it (and syncing its delete log) if need be; IOException when unknown or not coded. */
    private ColdVolume volume(int id) throws IOException {
        ColdVolume cv;
        try {
            cv = coldVolume(id);
        } catch (IllegalStateException notCoded) {
            throw new IOException(notCoded.getMessage(), notCoded);
        }
        if (cv == null) {
            throw new IOException("volume " + id + " is unknown to the directory");
        }
        return cv;
    }

    /**
     * The cached volume, or loaded: its committed stripe map, its needle index (from a holder of
     * the index block, CRC-checked) and its whole delete log so far.
     *
     * @return null when the directory knows no volume {@code id} (UNKNOWN_VOLUME)
     * @throws IllegalStateException when the volume has no committed stripe map (NO_STRIPE_MAP,
     *                               WRONG_STATE, or a map still planned): it is not erasure-coded
     */
    private ColdVolume coldVolume(int id) throws IOException {
        ColdVolume cv = volumes.get(id);
        if (cv != null) {
            return cv;
        }
        StripeMap m;
        try {
            m = cluster.stripeMap(id, true);
        } catch (ClusterReads.HttpStatusException e) {
            if (DirectoryErrors.UNKNOWN_VOLUME.name().equals(e.errorName())) {
                return null;
            }
            if (DirectoryErrors.NO_STRIPE_MAP.name().equals(e.errorName()) || DirectoryErrors.WRONG_STATE.name().equals(e.errorName())) {
                throw notCoded(id, e.errorName());
            }
            throw e;
        }
        if (!StripeMap.COMMITTED.equals(m.status())) {
            throw notCoded(id, "stripe map " + m.status());
        }
        VolumeIndex index = readIndex(m);
        ErasureCodec codec = codecs.computeIfAbsent(m.codec() + "/" + m.k() + "/" + m.r(),
                x -> ErasureCodec.create(CodecKind.fromWireName(m.codec()), m.k(), m.r()));
        ColdVolume fresh = new ColdVolume(m, index, codec, new Deletes());
        if (!syncDeletes(fresh)) {
            return null;
        }
        ColdVolume raced = volumes.putIfAbsent(id, fresh);
        return raced != null ? raced : fresh;
    }

    private static IllegalStateException notCoded(int id, String why) {
        return new IllegalStateException("volume " + id + " is not erasure-coded; read its replicas (" + why + ")");
    }

    /**
     * Reads the volume's delete log after the cached head ({@code GET /v1/volumes/{id}/deletes},
     * page after page while {@code more}) into the cached volume: one small directory call per
     * cold read when nothing was deleted since.
     *
     * @return false when the directory knows the volume no more
     */
    private boolean syncDeletes(ColdVolume cv) throws IOException {
        int id = cv.map().volume();
        while (true) {
            long after = cv.deletes().head();
            Wire.DeleteLog log;
            try {
                log = cluster.deleteLog(id, after, DELETE_LOG_PAGE);
            } catch (ClusterReads.HttpStatusException e) {
                if (DirectoryErrors.UNKNOWN_VOLUME.name().equals(e.errorName())) {
                    volumes.remove(id, cv);
                    return false;
                }
                throw e;
            }
            deleteLogReads.increment();
            cv.deletes().add(id, log.entries());
            if (!log.more() || log.entries().isEmpty()) {
                return true;
            }
        }
    }

    private VolumeIndex readIndex(StripeMap m) throws IOException {
        IOException last = null;
        Map<String, ClusterReads.StoreRef> s = stores(false);
        for (String holder : m.index().holders()) {
            ClusterReads.StoreRef ref = s.get(holder);
            if (ref == null || !ref.up()) {
                continue;
            }
            try {
                byte[] b = cluster.readBlock(ref.address(), m.index().name());
                CRC32C crc = new CRC32C();
                crc.update(b);
                if (b.length != m.index().length() || crc.getValue() != m.index().crc32c()) {
                    throw new IOException("index block " + m.index().name() + " on " + holder + " fails its CRC32C");
                }
                return VolumeIndex.decode(b, m.index().name() + " on store " + holder, m.volumeBytes());
            } catch (IOException e) {
                last = e;
            }
        }
        throw new IOException("volume " + m.volume() + ": no copy of its needle index " + m.index().name()
                + " is readable (holders " + m.index().holders() + ")" + (last == null ? "" : ": " + last.getMessage()), last);
    }

    private Map<String, ClusterReads.StoreRef> stores(boolean refresh) throws IOException {
        Map<String, ClusterReads.StoreRef> s = stores;
        if (s == null || refresh || System.currentTimeMillis() - storesAt > 1000) {
            s = cluster.stores();
            stores = s;
            storesAt = System.currentTimeMillis();
        }
        return s;
    }

    /** Reads bytes [offset, offset + length) of the volume file from its blocks. */
    /**
     * @param exclude null for a normal read (direct, degraded when a store is down or slow); else every
     *                piece is rebuilt without the blocks in it (keys {@code stripe * (k + r) + unit})
     */
    private ByteBuffer read(ColdVolume cv, long offset, int length, Set<Long> exclude) throws IOException {
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
            StripeMap.Block blk = m.stripes().get(stripe).blocks().get(unit);
            ClusterReads.StoreRef ref = stores(false).get(blk.store());
            // A piece whose own block is not excluded is read directly: rebuilding it too would
            // spend the code's tolerance on a good block (a needle over two blocks, one of them
            // corrupt, with a store down, was unreadable that way).
            Set<Integer> units = new TreeSet<>();
            boolean excluded = false;
            if (exclude != null) {
                int n1 = m.k() + m.r();
                for (long x : exclude) {
                    if (x / n1 == stripe && x % n1 != unit) {
                        units.add((int) (x % n1));
                    }
                }
                excluded = exclude.contains(stripe * (long) n1 + unit);
            }
            if (excluded || ref == null || !ref.up()) {
                degradedRead(cv, stripe, unit, inBlock, piece, units);
            } else {
                hedgedRead(cv, stripe, unit, inBlock, piece, cluster.readBlockAsync(ref.address(), blk.name(), inBlock, n), units);
            }
            out.position(out.position() + n);
        }
        return out.flip();
    }

    /**
     * Waits for the direct read up to the hedge delay; past it (or when it fails) rebuilds the
     * range from other blocks instead. A degraded read that cannot succeed falls back on the direct
     * read until its own deadline.
     */
    private void hedgedRead(ColdVolume cv, int stripe, int unit, long inBlock, ByteBuffer dst, CompletableFuture<byte[]> direct,
                            Set<Integer> exclude) throws IOException {
        try {
            byte[] got = direct.get(hedgeAfterMillis, TimeUnit.MILLISECONDS);
            if (got.length == dst.remaining()) {
                bytesRead.add(got.length);
                dst.put(got);
                healthy.increment();
                return;
            }
        } catch (ExecutionException e) {
            // the store failed: go degraded
        } catch (TimeoutException e) {
            hedged.increment();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted reading volume " + cv.map().volume());
        }
        int start = dst.position();
        try {
            degradedRead(cv, stripe, unit, inBlock, dst, exclude);
            direct.cancel(false);
        } catch (StripeLostException lost) {
            try {
                byte[] got = direct.get();
                if (got.length != dst.limit() - start) {
                    throw lost;
                }
                bytesRead.add(got.length);
                dst.position(start);
                dst.put(got);
                healthy.increment();
            } catch (ExecutionException e) {
                throw lost;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted reading volume " + cv.map().volume());
            }
        }
    }

    /**
     * Rebuilds {@code dst.remaining()} bytes at {@code inBlock} of one unit: plans the ranges the
     * codec needs, fetches them from their stores all at once, decodes from memory. A store the
     * directory reports down is never asked; a source that fails or passes the deadline joins the
     * unavailable set and the round is planned again.
     */
    private void degradedRead(ColdVolume cv, int stripe, int unit, long inBlock, ByteBuffer dst, Set<Integer> exclude)
            throws IOException {
        StripeMap m = cv.map();
        List<StripeMap.Block> blocks = m.stripes().get(stripe).blocks();
        Map<String, ClusterReads.StoreRef> s = stores(false);
        TreeSet<Integer> unavailable = new TreeSet<>(exclude);
        for (int u = 0; u < blocks.size(); u++) {
            ClusterReads.StoreRef ref = s.get(blocks.get(u).store());
            if (u != unit && (ref == null || !ref.up())) {
                unavailable.add(u);
            }
        }
        while (true) {
            int[] un = unavailable.stream().mapToInt(Integer::intValue).toArray();
            try {
                List<ReadRange> plan = cv.codec().planReadRange(m.blockSize(), unit, inBlock, dst.remaining(), un);
                RangeFetch round = new RangeFetch(plan, RangeFetch.OffsetMap.IDENTITY, r -> {
                    StripeMap.Block blk = blocks.get(r.unit());
                    ClusterReads.StoreRef ref = s.get(blk.store());
                    return ref == null ? CompletableFuture.failedFuture(new IOException("store " + blk.store() + " unknown"))
                            : cluster.readBlockAsync(ref.address(), blk.name(), r.offset(), (int) r.length());
                }, bytesRead::add);
                round.await();
                cv.codec().readRange(m.blockSize(), unit, inBlock, dst, un, round.reader());
                degraded.increment();
                return;
            } catch (RangeFetch.SourcesFailed f) {
                sourceFailures.increment();
                unavailable.addAll(f.units);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted rebuilding a range of volume " + m.volume());
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
     * is not the cached one any more: a reclaim replaced it (another job), or a repair moved a block
     * (same job, another store and name; the old block is deleted). Comparing the job alone missed
     * repairs, so a long-lived reader saw one more unit unavailable per repair until a stripe seemed
     * lost (found by the life-cycle checker, seed 1).
     */
    private boolean replaced(ColdVolume cv) throws IOException {
        StripeMap now = cluster.stripeMap(cv.map().volume());
        if (now == null || !StripeMap.COMMITTED.equals(now.status()) || now.equals(cv.map())) {
            return false;
        }
        volumes.remove(cv.map().volume(), cv);
        return true;
    }

    /** The committed stripe map this reader uses for {@code volume} (cached). */
    public StripeMap committedMap(int volume) throws IOException {
        return volume(volume).map();
    }

    /** The needle index this reader uses for {@code volume} (cached). */
    public VolumeIndex index(int volume) throws IOException {
        return volume(volume).index();
    }

    /** Bytes {@code [offset, offset + length)} of the encoded volume file, degraded if need be; unchecked. */
    public byte[] rawRange(int volume, long offset, int length) throws IOException {
        return read(volume(volume), offset, length, null).array();
    }

    /**
     * Whether needle {@code e} of coded volume {@code volume} is deleted by the volume's delete log:
     * the log names its key with the needle's own cookie (read from the needle, checked). An entry
     * with another cookie deletes nothing, since anyone who can reach the directory may log one.
     */
    public boolean deletedByLog(int volume, VolumeIndex.Entry e) throws IOException {
        ColdVolume cv = coldVolume(volume);
        if (cv == null || !syncDeletes(cv)) {
            return false;
        }
        boolean[] deleted = new boolean[1];
        checkedRead(cv, e, n -> {
            NeedleFormat.check(n, e.key(), e.alt());
            deleted[0] = cv.deletes().deleted(e.key(), NeedleFormat.cookie(n));
        });
        return deleted[0];
    }

    /**
     * The whole needle {@code e} as stored (header, data, footer, padding), checked (magic, CRC32C,
     * key, alt); rebuilt from other blocks if the direct read is corrupt.
     */
    public byte[] rawNeedle(int volume, VolumeIndex.Entry e) throws IOException {
        return checkedRead(volume(volume), e, b -> NeedleFormat.check(b, e.key(), e.alt())).array();
    }

    @Override
    public void close() {
        volumes.clear();
        for (String shape : new ArrayList<>(codecs.keySet())) {
            ErasureCodec c = codecs.remove(shape);
            if (c != null) {
                c.close();
            }
        }
    }
}
